"""Peer for bench/train.sh: the same MLP trained by PyTorch (one thread per rank, synthetic batch).

python3 bench/torch_mlp.py --hidden 2048,2048 --batch 32 --steps 200 [--ddp 2]
Prints one line: samples_per_s=<float> (whole job, steady state after 20 warm-up steps).
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def build(hidden):
    layers, width = [], 784
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.ReLU()]
        width = h
    layers.append(torch.nn.Linear(width, 10))
    return torch.nn.Sequential(*layers)


def worker(rank, world, args, port, result):
    torch.set_num_threads(1)
    torch.manual_seed(1)
    model = build(args.hidden)
    if world > 1:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = str(port)
        dist.init_process_group("gloo", rank=rank, world_size=world)
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    x = torch.randn(args.batch, 784)
    y = torch.randint(0, 10, (args.batch,))
    loss_fn = torch.nn.CrossEntropyLoss()
    warmup = 20
    for step in range(args.steps + warmup):
        if step == warmup:
            if world > 1:
                dist.barrier()
            t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        loss_fn(model(x), y).backward()
        opt.step()
    if world > 1:
        dist.barrier()
    elapsed = time.perf_counter() - t0
    if rank == 0:
        result.put(world * args.batch * args.steps / elapsed)
    if world > 1:
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hidden", default="256,256")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--ddp", type=int, default=1)
    p.add_argument("--port", type=int, default=29517)
    args = p.parse_args()
    args.hidden = [int(h) for h in args.hidden.split(",")]
    ctx = mp.get_context("spawn")
    result = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, args.ddp, args, args.port, result))
             for r in range(args.ddp)]
    for proc in procs:
        proc.start()
    value = result.get()
    for proc in procs:
        proc.join()
    print(f"samples_per_s={value:.1f}")


if __name__ == "__main__":
    main()
