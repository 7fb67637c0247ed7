//! Division by a run-time constant through one multiply-high, add and shift.
//!
//! A strided gather turns every linear output index into a storage offset with one
//! division and remainder per dimension. GPU integer division is a slow multi-instruction
//! sequence, so the kernels divide by multiplication instead. The magic numbers are computed
//! here on the host, where they can be tested on the CPU, and passed to the kernels as the
//! [`FastDivider`] struct that `kernels/strided_common.cuh` declares with the same layout.
//!
//! The scheme is the one of Granlund & Montgomery (1994), as PyTorch's `IntDivider<uint32_t>`
//! (`ATen/cuda/detail/IntegerDivider.cuh`) uses it, for divisors `d` in `1..=2^31` and
//! dividends `n` in `0..2^31`:
//!
//! * `shift = ceil(log2 d)` (the smallest `s` with `2^s >= d`),
//! * `multiplier = floor(2^32 · (2^shift − d) / d) + 1`,
//! * `q = (umulhi(n, multiplier) + n) >> shift`, where `umulhi` is the high 32 bits of the
//!   64-bit product. `umulhi(n, m) + n` cannot overflow 32 bits because `umulhi(n, m) < n`
//!   and `n < 2^31`.

/// Largest dividend the scheme is exact for (exclusive bound is `2^31`).
pub const MAX_DIVIDEND: u32 = i32::MAX as u32;
/// Largest divisor the scheme supports.
pub const MAX_DIVISOR: u32 = 1 << 31;

/// The magic numbers for one divisor. `#[repr(C)]`: the kernels read it as
/// `struct FastDivider { unsigned int divisor, multiplier, shift; }`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FastDivider {
    pub divisor: u32,
    pub multiplier: u32,
    pub shift: u32,
}

impl FastDivider {
    /// Magic numbers for `divisor`, or `None` outside `1..=2^31`.
    pub fn new(divisor: u32) -> Option<Self> {
        if divisor == 0 || divisor > MAX_DIVISOR {
            return None;
        }
        let shift = 32 - (divisor - 1).leading_zeros(); // ceil(log2 d); 0 for d == 1
        let multiplier = (((1u64 << 32) * ((1u64 << shift) - divisor as u64)) / divisor as u64) + 1;
        debug_assert!(multiplier <= u32::MAX as u64);
        Some(FastDivider {
            divisor,
            multiplier: multiplier as u32,
            shift,
        })
    }

    /// `n / divisor`, exactly as the kernels compute it. `n` must be at most [`MAX_DIVIDEND`].
    pub fn div(&self, n: u32) -> u32 {
        debug_assert!(n <= MAX_DIVIDEND);
        let high = ((n as u64 * self.multiplier as u64) >> 32) as u32;
        (high + n) >> self.shift
    }

    /// `(n / divisor, n % divisor)`.
    pub fn div_rem(&self, n: u32) -> (u32, u32) {
        let quotient = self.div(n);
        (quotient, n - quotient * self.divisor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator so the sampled tests are reproducible.
    fn splitmix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn check(divider: &FastDivider, n: u32) {
        let d = divider.divisor;
        assert_eq!(
            divider.div_rem(n),
            (n / d, n % d),
            "{n} / {d} with {divider:?}"
        );
    }

    #[test]
    fn rejects_divisors_outside_the_supported_range() {
        assert_eq!(FastDivider::new(0), None);
        assert_eq!(FastDivider::new(MAX_DIVISOR + 1), None);
        assert!(FastDivider::new(MAX_DIVISOR).is_some());
    }

    #[test]
    fn known_magic_numbers() {
        // d = 1: shift 0, multiplier 1 (q = 0 + n).
        assert_eq!(
            FastDivider::new(1),
            Some(FastDivider {
                divisor: 1,
                multiplier: 1,
                shift: 0
            })
        );
        // d = 7: shift 3, multiplier = floor(2^32 * 1 / 7) + 1 = 613566757.
        assert_eq!(FastDivider::new(7).unwrap().multiplier, 613_566_757);
        assert_eq!(FastDivider::new(7).unwrap().shift, 3);
        // Powers of two need no multiplication: multiplier 1, plain shift.
        let d128 = FastDivider::new(128).unwrap();
        assert_eq!((d128.multiplier, d128.shift), (1, 7));
    }

    #[test]
    fn exhaustive_for_small_divisors_and_dividends() {
        for d in 1..=1024 {
            let divider = FastDivider::new(d).unwrap();
            for n in 0..=4096 {
                check(&divider, n);
            }
        }
    }

    #[test]
    fn exact_at_the_edges_of_every_power_of_two() {
        let mut divisors = Vec::new();
        for bit in 0..=31u32 {
            let p = 1u64 << bit;
            for d in [p.saturating_sub(1), p, p + 1] {
                if (1..=MAX_DIVISOR as u64).contains(&d) {
                    divisors.push(d as u32);
                }
            }
        }
        for d in divisors {
            let divider = FastDivider::new(d).unwrap();
            let mut dividends = vec![0, 1, MAX_DIVIDEND, MAX_DIVIDEND - 1];
            // Around every multiple boundary near the top of the range and near d itself.
            for k in [1u64, 2, 3, (MAX_DIVIDEND as u64) / d as u64] {
                let m = k * d as u64;
                for n in [m.saturating_sub(1), m, m + 1] {
                    if n <= MAX_DIVIDEND as u64 {
                        dividends.push(n as u32);
                    }
                }
            }
            for n in dividends {
                check(&divider, n);
            }
        }
    }

    #[test]
    fn random_divisors_and_dividends_over_the_whole_range() {
        let mut state = 0x5EED;
        for _ in 0..2_000_000 {
            let d = (splitmix(&mut state) % MAX_DIVISOR as u64) as u32 + 1;
            // Mix small and large dividends: the low bits of a random value are just as
            // likely to expose a rounding error as the high ones.
            let raw = splitmix(&mut state);
            let n = if raw & 1 == 0 {
                (raw >> 33) as u32
            } else {
                ((raw >> 33) % (4 * d as u64 + 1)).min(MAX_DIVIDEND as u64) as u32
            };
            check(&FastDivider::new(d).unwrap(), n);
        }
    }

    #[test]
    fn every_dividend_for_a_few_awkward_divisors() {
        // The full 2^31 range is too slow for a debug test run; a prime step visits
        // ~2^31/8191 dividends spread over the whole range, plus every remainder class.
        for d in [3u32, 7, 641, 1_000_003, 2_147_483_647] {
            let divider = FastDivider::new(d).unwrap();
            let mut n = 0u32;
            while n <= MAX_DIVIDEND - 8191 {
                check(&divider, n);
                n += 8191;
            }
            check(&divider, MAX_DIVIDEND);
        }
    }
}
