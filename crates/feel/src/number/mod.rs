//! FEEL numbers: decimal128 semantics (34 significant digits, half-even rounding), in pure
//! Rust.
//!
//! This is what the DMN spec prescribes and what feel-scala gets from `BigDecimal` under
//! `MathContext.DECIMAL128`: `0.1 + 0.2 = 0.3` exactly, `1 / 3` has 34 threes. A `Number`
//! is always finite; an operation that would overflow the decimal128 range (adjusted
//! exponent beyond ±6144), divide by zero or leave the reals returns `None`, which the
//! evaluator turns into `null` as feel-scala does.
//!
//! Hand-written rather than bound to libdecnumber: FEEL text is untrusted input, and
//! fuzzing found out-of-bounds reads in libdecnumber's `decQuadAdd`.

mod wide;

use std::cmp::Ordering;
use std::fmt;

use wide::{POW10, U256, digits128};

/// Significant digits of decimal128.
const PRECISION: u32 = 34;
/// Range of the adjusted exponent (exponent of the most significant digit).
const MAX_ADJUSTED: i64 = 6144;
const MIN_ADJUSTED: i64 = -6143;

/// `(-1)^neg * coef * 10^exp` with `coef < 10^34`; zero is never negative.
#[derive(Clone, Copy)]
pub struct Number {
    /// The coefficient (< 10^34) as two 64-bit halves: a `u128` field would give the whole
    /// `Value` enum 16-byte alignment and 48 bytes, and evaluation moves values a lot.
    c: [u64; 2],
    exp: i32,
    neg: bool,
}

/// Rounding modes: the DMN 1.4+ rounding functions and arithmetic's half-even.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundMode {
    /// `round up`: away from zero.
    Up,
    /// `round down`: towards zero.
    Down,
    HalfUp,
    HalfDown,
    /// `decimal()` and all arithmetic: banker's rounding.
    HalfEven,
    /// `floor()`.
    Floor,
    /// `ceiling()`.
    Ceiling,
}

/// Whether dropping a remainder should increment the kept coefficient. `cmp_half` compares
/// the dropped part with half a unit; `exact` says nothing non-zero lies beyond it.
fn rounds_up(mode: RoundMode, neg: bool, odd: bool, cmp_half: Ordering, nonzero: bool) -> bool {
    if !nonzero {
        return false;
    }
    match mode {
        RoundMode::Down => false,
        RoundMode::Up => true,
        RoundMode::Ceiling => !neg,
        RoundMode::Floor => neg,
        RoundMode::HalfUp => cmp_half != Ordering::Less,
        RoundMode::HalfDown => cmp_half == Ordering::Greater,
        RoundMode::HalfEven => match cmp_half {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal => odd,
        },
    }
}

/// The two halves of a coefficient, low half first.
const fn split(v: u128) -> [u64; 2] {
    [v as u64, (v >> 64) as u64]
}

impl Number {
    #[inline]
    fn coef(&self) -> u128 {
        (u128::from(self.c[1]) << 64) | u128::from(self.c[0])
    }

    pub const ZERO: Number = Number {
        c: split(0),
        exp: 0,
        neg: false,
    };
    pub const ONE: Number = Number {
        c: split(1),
        exp: 0,
        neg: false,
    };

    /// Builds a number from an exact wide coefficient, rounding to 34 digits. `sticky`
    /// says the true value has non-zero digits beyond `coef` (from a division remainder).
    fn from_wide(coef: U256, exp: i64, neg: bool, sticky: bool) -> Option<Number> {
        Number::round_wide(coef, exp, neg, sticky, PRECISION, RoundMode::HalfEven)
    }

    fn round_wide(
        coef: U256,
        exp: i64,
        neg: bool,
        sticky: bool,
        precision: u32,
        mode: RoundMode,
    ) -> Option<Number> {
        let digits = coef.digits();
        let (mut kept, mut exp) = if digits > precision {
            let drop = digits - precision;
            let (q, r) = coef.divrem_pow10(drop);
            // Compare the dropped part with half a unit of the kept one: 2r vs 10^drop.
            let half = U256::from_u128(1).mul_pow10(drop)?;
            let twice = r.checked_add(r)?;
            let cmp = if twice == half && sticky {
                Ordering::Greater
            } else {
                twice.cmp(&half)
            };
            let q = q.to_u128()?;
            let up = rounds_up(mode, neg, q % 2 == 1, cmp, !r.is_zero() || sticky);
            (if up { q + 1 } else { q }, exp + i64::from(drop))
        } else {
            let q = coef.to_u128()?;
            // Inexact but nothing to drop: only a directed mode can still move it.
            let up = sticky && rounds_up(mode, neg, q % 2 == 1, Ordering::Less, true);
            (if up { q + 1 } else { q }, exp)
        };
        if kept == POW10[precision as usize] {
            kept /= 10;
            exp += 1;
        }
        Number::checked(kept, exp, neg)
    }

    /// Range check and canonical zero.
    fn checked(coef: u128, exp: i64, neg: bool) -> Option<Number> {
        if coef == 0 {
            let exp = exp.clamp(MIN_ADJUSTED, MAX_ADJUSTED) as i32;
            return Some(Number {
                c: split(0),
                exp,
                neg: false,
            });
        }
        let adjusted = exp + i64::from(digits128(coef)) - 1;
        if !(MIN_ADJUSTED..=MAX_ADJUSTED).contains(&adjusted) {
            return None;
        }
        Some(Number {
            c: split(coef),
            exp: exp as i32,
            neg,
        })
    }

    /// Parses a plain or scientific decimal string (`"1"`, `"-2.50"`, `".5"`, `"1e3"`),
    /// rounding to 34 digits. Rejects everything else (including NaN and infinities).
    pub fn parse(text: &str) -> Option<Number> {
        let t = text.trim();
        let (neg, body) = match t.as_bytes().first() {
            Some(b'-') => (true, &t[1..]),
            Some(b'+') => (false, &t[1..]),
            _ => (false, t),
        };
        let (mantissa, exp_part) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], Some(&body[i + 1..])),
            None => (body, None),
        };
        let (int, frac) = match mantissa.find('.') {
            Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
            None => (mantissa, ""),
        };
        if int.is_empty() && frac.is_empty()
            || !int.bytes().all(|b| b.is_ascii_digit())
            || !frac.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let mut exp: i64 = match exp_part {
            None => 0,
            Some(e) => {
                let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
                if digits.is_empty()
                    || digits.len() > 12
                    || !digits.bytes().all(|b| b.is_ascii_digit())
                {
                    return None;
                }
                e.parse::<i64>().ok()?
            }
        };
        exp -= frac.len() as i64;
        // Up to 40 significant digits exactly; anything beyond only decides rounding.
        let mut coef = U256::ZERO;
        let mut kept = 0u32;
        let mut sticky = false;
        let mut started = false;
        for b in int.bytes().chain(frac.bytes()) {
            let d = u128::from(b - b'0');
            if !started && d == 0 {
                continue;
            }
            started = true;
            if kept < 40 {
                coef = coef.mul_u128(10)?.checked_add(U256::from_u128(d))?;
                kept += 1;
            } else {
                exp += 1;
                sticky |= d != 0;
            }
        }
        Number::from_wide(coef, exp, neg, sticky)
    }

    pub fn from_i64(n: i64) -> Number {
        Number {
            c: split(u128::from(n.unsigned_abs())),
            exp: 0,
            neg: n < 0,
        }
    }

    pub fn from_u64(n: u64) -> Number {
        Number {
            c: split(u128::from(n)),
            exp: 0,
            neg: false,
        }
    }

    pub fn from_i128(n: i128) -> Option<Number> {
        Number::from_wide(U256::from_u128(n.unsigned_abs()), 0, n < 0, false)
    }

    /// Converts like `BigDecimal.valueOf(double)`: through the shortest decimal string that
    /// round-trips, so a JSON `0.1` becomes exactly `0.1`.
    pub fn from_f64(f: f64) -> Option<Number> {
        if !f.is_finite() {
            return None;
        }
        Number::parse(&format!("{f:e}"))
    }

    pub fn to_f64(self) -> f64 {
        let sign = if self.neg { "-" } else { "" };
        format!("{sign}{}e{}", self.coef(), self.exp)
            .parse::<f64>()
            .unwrap_or(f64::NAN)
    }

    pub fn is_zero(self) -> bool {
        self.coef() == 0
    }

    pub fn is_negative(self) -> bool {
        self.neg && self.coef() != 0
    }

    pub fn signum(self) -> i32 {
        if self.coef() == 0 {
            0
        } else if self.neg {
            -1
        } else {
            1
        }
    }

    pub fn is_integer(self) -> bool {
        if self.exp >= 0 || self.coef() == 0 {
            return true;
        }
        let shift = (-i64::from(self.exp)) as u64;
        shift <= 38 && self.coef().is_multiple_of(POW10[shift as usize])
    }

    /// The value as an `i64` if it is a whole number in range.
    pub fn to_i64(self) -> Option<i64> {
        if !self.is_integer() {
            return None;
        }
        if self.coef() == 0 {
            return Some(0);
        }
        let magnitude: u128 = if self.exp >= 0 {
            let e = u32::try_from(self.exp).ok().filter(|e| *e <= 38)?;
            self.coef().checked_mul(POW10[e as usize])?
        } else {
            self.coef() / POW10[(-self.exp) as usize]
        };
        if self.neg {
            0i64.checked_sub_unsigned(u64::try_from(magnitude).ok()?)
        } else {
            i64::try_from(magnitude).ok()
        }
    }

    /// The value as a `u64` if it is a whole number in range.
    pub fn to_u64(self) -> Option<u64> {
        if !self.is_integer() || self.is_negative() {
            return None;
        }
        if self.coef() == 0 {
            return Some(0);
        }
        let magnitude: u128 = if self.exp >= 0 {
            let e = u32::try_from(self.exp).ok().filter(|e| *e <= 38)?;
            self.coef().checked_mul(POW10[e as usize])?
        } else {
            self.coef() / POW10[(-self.exp) as usize]
        };
        u64::try_from(magnitude).ok()
    }

    /// Truncates towards zero and converts to `i64`; `None` when out of range.
    pub fn trunc_i64(self) -> Option<i64> {
        self.round(0, RoundMode::Down)?.to_i64()
    }

    pub fn negated(self) -> Number {
        Number {
            neg: !self.neg && self.coef() != 0,
            ..self
        }
    }

    pub fn abs(self) -> Number {
        Number { neg: false, ..self }
    }

    pub fn checked_add(self, o: Number) -> Option<Number> {
        Number::add_signed(self, o)
    }

    pub fn checked_sub(self, o: Number) -> Option<Number> {
        Number::add_signed(self, o.negated())
    }

    /// The same value with trailing zeros added down to `exp`, as far as 34 digits allow
    /// (`1 + 0.00 = 1.00`, as `BigDecimal` keeps the larger scale).
    fn widened_to(self, exp: i32) -> Number {
        let room = PRECISION.saturating_sub(digits128(self.coef()));
        let shift = (i64::from(self.exp) - i64::from(exp)).clamp(0, i64::from(room)) as u32;
        if self.coef() == 0 {
            return Number {
                exp: self.exp.min(exp),
                ..self
            };
        }
        Number {
            c: split(self.coef() * POW10[shift as usize]),
            exp: self.exp - shift as i32,
            neg: self.neg,
        }
    }

    fn add_signed(a: Number, b: Number) -> Option<Number> {
        if b.coef() == 0 {
            return Some(a.widened_to(b.exp));
        }
        if a.coef() == 0 {
            return Some(b.widened_to(a.exp));
        }
        // `hi` has the larger exponent.
        let (hi, lo) = if a.exp >= b.exp { (a, b) } else { (b, a) };
        let d = (i64::from(hi.exp) - i64::from(lo.exp)) as u64;
        let (hi_coef, hi_exp, gap) = if d <= 42 {
            (U256::from_u128(hi.coef()), i64::from(hi.exp), d as u32)
        } else {
            // Spread `hi` to 37 digits first; `lo` only matters to the extent it reaches.
            let k = 37 - digits128(hi.coef());
            let gap = d - u64::from(k);
            if gap > 39 {
                // `lo` is below a thousandth of `hi`'s 37th digit: it only breaks ties, so
                // it becomes one unit of a 38th digit.
                let spread = hi.coef() * POW10[k as usize] * 10;
                let coef = if hi.neg == lo.neg {
                    spread + 1
                } else {
                    spread - 1
                };
                return Number::from_wide(
                    U256::from_u128(coef),
                    i64::from(hi.exp) - i64::from(k) - 1,
                    hi.neg,
                    false,
                );
            }
            (
                U256::from_u128(hi.coef() * POW10[k as usize]),
                i64::from(hi.exp) - i64::from(k),
                gap as u32,
            )
        };
        let x = hi_coef.mul_pow10(gap)?;
        let y = U256::from_u128(lo.coef());
        let exp = hi_exp - i64::from(gap);
        if hi.neg == lo.neg {
            Number::from_wide(x.checked_add(y)?, exp, hi.neg, false)
        } else if x >= y {
            Number::from_wide(x.sub(y), exp, hi.neg, false)
        } else {
            Number::from_wide(y.sub(x), exp, lo.neg, false)
        }
    }

    pub fn checked_mul(self, o: Number) -> Option<Number> {
        Number::from_wide(
            U256::mul128(self.coef(), o.coef()),
            i64::from(self.exp) + i64::from(o.exp),
            self.neg != o.neg,
            false,
        )
    }

    /// `None` for a zero divisor (FEEL gives null there). An exact quotient keeps the
    /// preferred exponent (`10 / 4 = 2.5`, `1.00 / 2 = 0.50`), as `BigDecimal` does.
    pub fn checked_div(self, o: Number) -> Option<Number> {
        if o.coef() == 0 {
            return None;
        }
        let ideal = i64::from(self.exp) - i64::from(o.exp);
        if self.coef() == 0 {
            return Number::checked(0, ideal, false);
        }
        let (da, db) = (digits128(self.coef()), digits128(o.coef()));
        // Scale the dividend so the quotient has at least 35 digits.
        let k = PRECISION + 1 + db - da;
        let n = U256::from_u128(self.coef()).mul_pow10(k)?;
        let (mut q, r) = n.divrem(o.coef());
        let mut exp = ideal - i64::from(k);
        if r == 0 {
            while exp < ideal {
                let (q10, r10) = q.divrem(10);
                if r10 != 0 {
                    break;
                }
                q = q10;
                exp += 1;
            }
        }
        Number::from_wide(q, exp, self.neg != o.neg, r != 0)
    }

    /// The remainder of truncating division (`self - o * trunc(self / o)`), exact for any
    /// magnitudes (modular arithmetic on the coefficients); `None` for a zero divisor.
    fn rem(self, o: Number) -> Option<Number> {
        if o.coef() == 0 {
            return None;
        }
        if self.coef() == 0 {
            return Some(self);
        }
        let (r, exp) = if self.exp < o.exp {
            // Align the divisor down to the dividend's exponent; if it no longer fits in
            // 128 bits it is larger than the dividend, which is then the remainder.
            match U256::from_u128(o.coef())
                .mul_pow10((o.exp - self.exp) as u32)
                .and_then(U256::to_u128)
            {
                Some(m) => (self.coef() % m, self.exp),
                None => (self.coef(), self.exp),
            }
        } else {
            // dividend = coef * 10^d at the divisor's exponent:
            // (coef mod m) * (10^d mod m) mod m.
            let m = o.coef();
            let d = (self.exp - o.exp) as u32;
            let scale = pow10_mod(d, m);
            (mul_mod(self.coef() % m, scale, m), o.exp)
        };
        Number::from_wide(U256::from_u128(r), i64::from(exp), self.neg, false)
    }

    /// FEEL `modulo`: the result has the sign of the divisor
    /// (`dividend - divisor * floor(dividend / divisor)`), computed exactly.
    pub fn modulo(self, divisor: Number) -> Option<Number> {
        let r = self.rem(divisor)?;
        if !r.is_zero() && r.neg != divisor.neg {
            r.checked_add(divisor)
        } else {
            Some(r)
        }
    }

    /// Rounds to `scale` digits after the point with the given mode. A number that already
    /// has no more digits is returned as it is.
    pub fn round(self, scale: i64, mode: RoundMode) -> Option<Number> {
        // The scale range of decimal128 (DMN: outside it the rounding functions are null).
        if !(-6111..=6176).contains(&scale) {
            return None;
        }
        let target = -scale;
        if i64::from(self.exp) >= target {
            return Some(self);
        }
        let drop = (target - i64::from(self.exp)) as u64;
        if drop > 76 {
            // Everything is dropped; only directed modes can produce one unit.
            let up = rounds_up(mode, self.neg, false, Ordering::Less, self.coef() != 0);
            return Number::checked(u128::from(up), target, self.neg);
        }
        let (q, r) = U256::from_u128(self.coef()).divrem_pow10(drop as u32);
        let half = U256::from_u128(1).mul_pow10(drop as u32)?;
        let twice = r.checked_add(r)?;
        let q = q.to_u128()?;
        let up = rounds_up(mode, self.neg, q % 2 == 1, twice.cmp(&half), !r.is_zero());
        Number::checked(if up { q + 1 } else { q }, target, self.neg)
    }

    /// `self ** exp`: integer powers by repeated squaring with guard digits, other
    /// exponents in double precision (as feel-scala does).
    pub fn pow(self, exp: Number) -> Option<Number> {
        if self.coef() == 0 {
            return if exp.is_negative() {
                None
            } else if exp.is_zero() {
                Some(Number::ONE)
            } else {
                Some(Number::ZERO)
            };
        }
        let Some(n) = exp.to_i64().filter(|n| n.unsigned_abs() <= 999_999_999) else {
            let r = self.to_f64().powf(exp.to_f64());
            return Number::from_f64(r);
        };
        // Work with 38 digits and round once at the end.
        let mut result = (1u128, 0i64);
        let mut base = (self.coef(), i64::from(self.exp));
        let mut e = n.unsigned_abs();
        let wide_mul = |(a, ea): (u128, i64), (b, eb): (u128, i64)| -> Option<(u128, i64)> {
            let p =
                Number::round_wide(U256::mul128(a, b), 0, false, false, 38, RoundMode::HalfEven)?;
            let e = ea + eb + i64::from(p.exp);
            if !(-100_000..=100_000).contains(&e) {
                return None;
            }
            Some((p.coef(), e))
        };
        while e > 0 {
            if e & 1 == 1 {
                result = wide_mul(result, base)?;
            }
            e >>= 1;
            if e > 0 {
                base = wide_mul(base, base)?;
            }
        }
        let neg = self.neg && n % 2 != 0;
        let magnitude = Number::from_wide(U256::from_u128(result.0), result.1, neg, false)?;
        if n < 0 {
            Number::ONE.checked_div(magnitude)
        } else {
            Some(magnitude)
        }
    }

    /// Square root to 34 digits (Newton's method from a double estimate).
    pub fn sqrt(self) -> Option<Number> {
        if self.is_negative() {
            return None;
        }
        if self.coef() == 0 {
            return Some(Number::ZERO);
        }
        let two = Number::from_i64(2);
        let mut x = Number::from_f64(self.to_f64().sqrt())?;
        for _ in 0..6 {
            let next = x.checked_add(self.checked_div(x)?)?.checked_div(two)?;
            if next == x {
                break;
            }
            x = next;
        }
        Some(x.normalized_to(self.exp / 2))
    }

    /// Natural logarithm, in double precision (feel-scala uses `Math.log`).
    pub fn ln(self) -> Option<Number> {
        if self.is_negative() || self.is_zero() {
            return None;
        }
        Number::from_f64(self.to_f64().ln())
    }

    /// e^x, in double precision (feel-scala uses `Math.exp`).
    pub fn exp(self) -> Option<Number> {
        Number::from_f64(self.to_f64().exp())
    }

    /// Removes trailing zeros, but not beyond the given exponent.
    fn normalized_to(self, min_exp: i32) -> Number {
        let mut n = self;
        while n.coef() != 0 && n.coef().is_multiple_of(10) && n.exp < min_exp {
            n.c = split(n.coef() / 10);
            n.exp += 1;
        }
        n
    }

    /// The number without trailing zeros (`2.50` -> `2.5`).
    pub fn normalized(self) -> Number {
        let mut n = self;
        if n.coef() == 0 {
            return Number::ZERO;
        }
        while n.coef().is_multiple_of(10) {
            n.c = split(n.coef() / 10);
            n.exp += 1;
        }
        n
    }

    /// Number of digits after the decimal point (negative for trailing zeros).
    pub fn scale(self) -> i32 {
        -self.exp
    }

    /// Compares magnitudes.
    fn cmp_magnitude(&self, o: &Number) -> Ordering {
        match (self.coef() == 0, o.coef() == 0) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let adj_a = i64::from(self.exp) + i64::from(digits128(self.coef()));
        let adj_b = i64::from(o.exp) + i64::from(digits128(o.coef()));
        if adj_a != adj_b {
            return adj_a.cmp(&adj_b);
        }
        // Same magnitude order: the exponents differ by fewer than 34.
        let base = self.exp.min(o.exp);
        let a = U256::from_u128(self.coef()).mul_pow10((self.exp - base) as u32);
        let b = U256::from_u128(o.coef()).mul_pow10((o.exp - base) as u32);
        a.cmp(&b)
    }
}

fn mul_mod(a: u128, b: u128, m: u128) -> u128 {
    U256::mul128(a, b).divrem(m).1
}

/// 10^e mod m by square-and-multiply.
fn pow10_mod(mut e: u32, m: u128) -> u128 {
    let mut result = 1 % m;
    let mut base = 10 % m;
    while e > 0 {
        if e & 1 == 1 {
            result = mul_mod(result, base, m);
        }
        base = mul_mod(base, base, m);
        e >>= 1;
    }
    result
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Number {}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Number) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Number {
    fn cmp(&self, other: &Number) -> Ordering {
        match (self.is_negative(), other.is_negative()) {
            (false, true) => {
                if self.is_zero() && other.is_zero() {
                    Ordering::Equal
                } else {
                    Ordering::Greater
                }
            }
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
        }
    }
}

impl fmt::Display for Number {
    /// Plain notation, never scientific, keeping the scale the arithmetic produced (like
    /// `BigDecimal.toPlainString`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.coef() == 0 {
            if self.exp >= 0 {
                return f.write_str("0");
            }
            return write!(f, "0.{}", "0".repeat((-self.exp) as usize));
        }
        if self.neg {
            f.write_str("-")?;
        }
        let digits = self.coef().to_string();
        if self.exp >= 0 {
            f.write_str(&digits)?;
            return f.write_str(&"0".repeat(self.exp as usize));
        }
        let frac = (-self.exp) as usize;
        if digits.len() > frac {
            let (int, fr) = digits.split_at(digits.len() - frac);
            write!(f, "{int}.{fr}")
        } else {
            write!(f, "0.{}{digits}", "0".repeat(frac - digits.len()))
        }
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::hash::Hash for Number {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let n = self.normalized();
        (n.coef(), n.exp, n.neg).hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> Number {
        Number::parse(s).unwrap()
    }

    #[test]
    fn decimal_addition_is_exact() {
        assert_eq!(n("0.1").checked_add(n("0.2")).unwrap(), n("0.3"));
        assert_eq!(n("0.1").checked_add(n("0.2")).unwrap().to_string(), "0.3");
    }

    #[test]
    fn division_rounds_to_34_digits() {
        let third = n("1").checked_div(n("3")).unwrap();
        assert_eq!(third.to_string(), "0.3333333333333333333333333333333333");
        assert!(n("1").checked_div(Number::ZERO).is_none());
    }

    #[test]
    fn modulo_takes_the_sign_of_the_divisor() {
        assert_eq!(n("12").modulo(n("5")).unwrap(), n("2"));
        assert_eq!(n("-12").modulo(n("5")).unwrap(), n("3"));
        assert_eq!(n("12").modulo(n("-5")).unwrap(), n("-3"));
        assert_eq!(n("10.1").modulo(n("4.5")).unwrap(), n("1.1"));
    }

    #[test]
    fn rounding_modes() {
        assert_eq!(n("5.5").round(0, RoundMode::HalfEven).unwrap(), n("6"));
        assert_eq!(n("6.5").round(0, RoundMode::HalfEven).unwrap(), n("6"));
        assert_eq!(n("-5.5").round(0, RoundMode::HalfUp).unwrap(), n("-6"));
        assert_eq!(n("-5.5").round(0, RoundMode::HalfDown).unwrap(), n("-5"));
        assert_eq!(
            n("1.121").round(2, RoundMode::Up).unwrap().to_string(),
            "1.13"
        );
        assert_eq!(n("-1.5").round(0, RoundMode::Floor).unwrap(), n("-2"));
        assert_eq!(n("1.5").round(0, RoundMode::Ceiling).unwrap(), n("2"));
    }

    #[test]
    fn conversions() {
        assert_eq!(Number::from_f64(0.1).unwrap().to_string(), "0.1");
        assert_eq!(n("2.0").to_i64(), Some(2));
        assert_eq!(n("2.5").to_i64(), None);
        assert!(n("2.0").is_integer());
        assert_eq!(n("1E+3").to_string(), "1000");
        assert_eq!(n("-0").to_string(), "0");
        assert!(Number::parse("abc").is_none());
        assert!(Number::parse("1e").is_none());
        assert!(Number::parse("NaN").is_none());
    }

    #[test]
    fn power_and_roots() {
        assert_eq!(n("2").pow(n("10")).unwrap(), n("1024"));
        assert_eq!(n("10").pow(n("-2")).unwrap(), n("0.01"));
        assert_eq!(n("4").sqrt().unwrap(), n("2"));
        assert!(n("-1").sqrt().is_none());
        assert!(n("0").ln().is_none());
        assert_eq!(n("0").exp().unwrap(), n("1"));
    }
}
