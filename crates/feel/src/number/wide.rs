//! A 256-bit unsigned integer, just big enough for decimal128 arithmetic: the product of
//! two 34-digit coefficients, or a coefficient scaled by up to 42 more digits (77 decimal
//! digits fit).

use std::cmp::Ordering;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct U256 {
    pub hi: u128,
    pub lo: u128,
}

impl PartialOrd for U256 {
    fn partial_cmp(&self, other: &U256) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for U256 {
    fn cmp(&self, other: &U256) -> Ordering {
        self.hi.cmp(&other.hi).then(self.lo.cmp(&other.lo))
    }
}

/// 10^0 ..= 10^38, all that fit a `u128`.
pub const POW10: [u128; 39] = {
    let mut t = [1u128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

impl U256 {
    pub const ZERO: U256 = U256 { hi: 0, lo: 0 };

    pub fn from_u128(v: u128) -> U256 {
        U256 { hi: 0, lo: v }
    }

    pub fn is_zero(self) -> bool {
        self.hi == 0 && self.lo == 0
    }

    pub fn to_u128(self) -> Option<u128> {
        (self.hi == 0).then_some(self.lo)
    }

    /// Full 128 x 128 -> 256-bit product.
    pub fn mul128(a: u128, b: u128) -> U256 {
        let (a1, a0) = (a >> 64, a & u128::from(u64::MAX));
        let (b1, b0) = (b >> 64, b & u128::from(u64::MAX));
        let p00 = a0 * b0;
        let p01 = a0 * b1;
        let p10 = a1 * b0;
        let p11 = a1 * b1;
        // Middle terms each fit 128 bits; their sum may carry one bit.
        let (mid, carry) = p01.overflowing_add(p10);
        let (lo, c1) = p00.overflowing_add(mid << 64);
        let hi = p11 + (mid >> 64) + (u128::from(carry) << 64) + u128::from(c1);
        U256 { hi, lo }
    }

    /// `self * m`, or `None` on overflow.
    pub fn mul_u128(self, m: u128) -> Option<U256> {
        let low = U256::mul128(self.lo, m);
        let high = U256::mul128(self.hi, m);
        if high.hi != 0 {
            return None;
        }
        let hi = low.hi.checked_add(high.lo)?;
        Some(U256 { hi, lo: low.lo })
    }

    /// `self * 10^k`, or `None` on overflow.
    pub fn mul_pow10(self, mut k: u32) -> Option<U256> {
        let mut v = self;
        while k > 0 {
            let step = k.min(38);
            v = v.mul_u128(POW10[step as usize])?;
            k -= step;
        }
        Some(v)
    }

    pub fn checked_add(self, o: U256) -> Option<U256> {
        let (lo, c) = self.lo.overflowing_add(o.lo);
        let hi = self.hi.checked_add(o.hi)?.checked_add(u128::from(c))?;
        Some(U256 { hi, lo })
    }

    /// `self - o`; the caller guarantees `self >= o`.
    pub fn sub(self, o: U256) -> U256 {
        let (lo, b) = self.lo.overflowing_sub(o.lo);
        U256 {
            hi: self.hi.wrapping_sub(o.hi).wrapping_sub(u128::from(b)),
            lo,
        }
    }

    fn shl1(self) -> U256 {
        U256 {
            hi: (self.hi << 1) | (self.lo >> 127),
            lo: self.lo << 1,
        }
    }

    /// Quotient and remainder by a non-zero `u128`.
    pub fn divrem(self, d: u128) -> (U256, u128) {
        if self.hi == 0 {
            return (U256::from_u128(self.lo / d), self.lo % d);
        }
        if d <= u128::from(u64::MAX) {
            return self.divrem_small(d);
        }
        // Restoring binary long division; the remainder stays below `d` < 2^128, but
        // shifting it left needs a 129th bit, tracked in `top`.
        let mut q = U256::ZERO;
        let mut r: u128 = 0;
        for i in (0..256).rev() {
            let bit = if i >= 128 {
                (self.hi >> (i - 128)) & 1
            } else {
                (self.lo >> i) & 1
            };
            let top = r >> 127;
            r = (r << 1) | bit;
            q = q.shl1();
            if top == 1 || r >= d {
                r = r.wrapping_sub(d);
                q.lo |= 1;
            }
        }
        (q, r)
    }

    /// Division by a divisor below 2^64, 64 bits at a time.
    fn divrem_small(self, d: u128) -> (U256, u128) {
        let limbs = [
            (self.hi >> 64) as u64,
            self.hi as u64,
            (self.lo >> 64) as u64,
            self.lo as u64,
        ];
        let mut out = [0u64; 4];
        let mut r: u128 = 0;
        for (i, limb) in limbs.iter().enumerate() {
            let cur = (r << 64) | u128::from(*limb);
            out[i] = (cur / d) as u64;
            r = cur % d;
        }
        (
            U256 {
                hi: (u128::from(out[0]) << 64) | u128::from(out[1]),
                lo: (u128::from(out[2]) << 64) | u128::from(out[3]),
            },
            r,
        )
    }

    /// Quotient and remainder by 10^k (k <= 77), the remainder as a `U256`.
    pub fn divrem_pow10(self, k: u32) -> (U256, U256) {
        if k > 76 {
            // 10^77 exceeds every U256 value.
            return (U256::ZERO, self);
        }
        if k <= 38 {
            let (q, r) = self.divrem(POW10[k as usize]);
            return (q, U256::from_u128(r));
        }
        let (q1, r1) = self.divrem(POW10[38]);
        let (q2, r2) = q1.divrem(POW10[(k - 38) as usize]);
        // remainder = r2 * 10^38 + r1
        let rem = U256::mul128(r2, POW10[38])
            .checked_add(U256::from_u128(r1))
            .unwrap_or(U256::ZERO);
        (q2, rem)
    }

    /// Number of decimal digits (0 has 1).
    pub fn digits(self) -> u32 {
        if self.hi == 0 {
            return digits128(self.lo);
        }
        // Compare with powers of ten beyond 10^38.
        let mut n = 39;
        let mut p = U256::from_u128(POW10[38]).mul_u128(10);
        while let Some(pow) = p {
            if self < pow {
                return n;
            }
            n += 1;
            p = pow.mul_u128(10);
        }
        n
    }
}

/// Number of decimal digits of a `u128` (0 has 1).
pub fn digits128(v: u128) -> u32 {
    if v == 0 { 1 } else { v.ilog10() + 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplication_and_division_round_trip() {
        let a = POW10[34] - 1;
        let b = POW10[33] + 7;
        let p = U256::mul128(a, b);
        let (q, r) = p.divrem(b);
        assert_eq!((q.to_u128(), r), (Some(a), 0));
        let (q, r) = p.divrem(3);
        assert_eq!(
            q.mul_u128(3)
                .and_then(|x| x.checked_add(U256::from_u128(r))),
            Some(p)
        );
        let big = U256::from_u128(u128::MAX).mul_pow10(20).unwrap();
        let (q, r) = big.divrem(u128::MAX - 5);
        let back = q
            .mul_u128(u128::MAX - 5)
            .and_then(|x| x.checked_add(U256::from_u128(r)));
        assert_eq!(back, Some(big));
    }

    #[test]
    fn digits_and_powers() {
        assert_eq!(digits128(0), 1);
        assert_eq!(digits128(POW10[34] - 1), 34);
        assert_eq!(
            U256::from_u128(1).mul_pow10(76).map(|v| v.digits()),
            Some(77)
        );
        assert!(U256::from_u128(1).mul_pow10(78).is_none());
        let (q, r) = U256::from_u128(123_456)
            .mul_pow10(50)
            .unwrap()
            .divrem_pow10(52);
        assert_eq!(q.to_u128(), Some(1234));
        assert_eq!(r, U256::from_u128(56).mul_pow10(50).unwrap());
    }
}
