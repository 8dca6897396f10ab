"""A free TCP port on the loopback interface, for a process group's rendezvous on one host."""
import socket


def free_port():
    """A port no socket holds now (the kernel's pick; another process may take it before it is
    used, so callers use it at once)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
