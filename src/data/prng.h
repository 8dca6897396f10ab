// Small, fully specified pseudo-random generators, so that shuffles and augmentations are
// bit-identical on every platform and standard library (std::shuffle and the std
// distributions are implementation-defined).
#pragma once

#include <cstdint>

namespace stepscope::data {

// SplitMix64 (Steele, Lea, Flood 2014): one 64-bit state, advanced by a Weyl constant and
// finalised by a bit mixer. Used to seed Xoshiro256 and to derive keys from tuples.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

// Mixes a tuple of keys into one well-spread 64-bit seed: MixSeed(a, b) != MixSeed(b, a).
inline uint64_t MixSeed(uint64_t a, uint64_t b) {
  SplitMix64 g(a ^ (b * 0xd1342543de82ef95ULL + 0x2545f4914f6cdd1dULL));
  g.Next();
  return g.Next() ^ b;
}
inline uint64_t MixSeed(uint64_t a, uint64_t b, uint64_t c) { return MixSeed(MixSeed(a, b), c); }

// xoshiro256** (Blackman, Vigna 2018), seeded from SplitMix64 as its authors recommend.
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    SplitMix64 g(seed);
    for (uint64_t& s : s_) s = g.Next();
  }
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform integer in [0, bound), bound > 0, without modulo bias: draws below
  // 2^64 mod bound are rejected.
  uint64_t Below(uint64_t bound) {
    const uint64_t threshold = (0 - bound) % bound;
    for (;;) {
      const uint64_t r = Next();
      if (r >= threshold) return r % bound;
    }
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace stepscope::data
