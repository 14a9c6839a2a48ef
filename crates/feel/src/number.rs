//! FEEL numbers: IEEE 754-2008 decimal128 (34 significant digits, half-even rounding).
//!
//! This is what the DMN spec prescribes, and it matches feel-scala, whose numbers are
//! `BigDecimal`s under `MathContext.DECIMAL128`: `0.1 + 0.2 = 0.3` exactly. A `Number` is
//! always finite; operations that would give NaN or an infinity return `None`, which the
//! evaluator turns into `null` (as feel-scala does).

use std::cmp::Ordering;
use std::fmt;

use dec::{Context, Decimal, Decimal128, Rounding};

/// Working precision for the transcendental functions, a few digits above 34 so the final
/// rounding to decimal128 is correct.
type Wide = Decimal<13>;

#[derive(Clone, Copy)]
pub struct Number(Decimal128);

/// Rounding modes of the DMN 1.4+ rounding functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundMode {
    /// `round up`: away from zero.
    Up,
    /// `round down`: towards zero.
    Down,
    HalfUp,
    HalfDown,
    /// `decimal()`: banker's rounding.
    HalfEven,
    /// `floor()`.
    Floor,
    /// `ceiling()`.
    Ceiling,
}

fn cx() -> Context<Decimal128> {
    Context::<Decimal128>::default()
}

/// decNumber's `exp`, `ln` and `power` need exponent limits within ±999,999.
fn math_context() -> Option<Context<Wide>> {
    let mut c = Context::<Wide>::default();
    c.set_precision(34).ok()?;
    c.set_max_exponent(999_999).ok()?;
    c.set_min_exponent(-999_999).ok()?;
    Some(c)
}

fn finite(d: Decimal128) -> Option<Number> {
    if d.is_finite() { Some(Number(d)) } else { None }
}

impl Number {
    pub const ZERO: Number = Number(Decimal128::ZERO);
    pub const ONE: Number = Number(Decimal128::ONE);

    /// Parses a plain or scientific decimal string (`"1"`, `"-2.50"`, `".5"`, `"1e3"`).
    /// Rejects NaN, infinities and anything else the FEEL grammar would not accept as a
    /// number after conversion.
    pub fn parse(text: &str) -> Option<Number> {
        let t = text.trim();
        let body = t.strip_prefix(['-', '+']).unwrap_or(t);
        if body.is_empty() {
            return None;
        }
        let mut seen_digit = false;
        let mut seen_dot = false;
        let mut seen_exp = false;
        let mut prev = ' ';
        for c in body.chars() {
            match c {
                '0'..='9' => seen_digit = true,
                '.' if !seen_dot && !seen_exp => seen_dot = true,
                'e' | 'E' if seen_digit && !seen_exp => seen_exp = true,
                '+' | '-' if prev == 'e' || prev == 'E' => {}
                _ => return None,
            }
            prev = c;
        }
        if !seen_digit || matches!(prev, 'e' | 'E' | '+' | '-') {
            return None;
        }
        let mut c = cx();
        let d = c.parse(t).ok()?;
        if c.status().inexact() || !d.is_finite() {
            // More than 34 digits: round like BigDecimal under DECIMAL128 would.
            return finite(d);
        }
        finite(d)
    }

    pub fn from_i64(n: i64) -> Number {
        Number(Decimal128::from(n))
    }

    pub fn from_u64(n: u64) -> Number {
        Number(Decimal128::from(n))
    }

    pub fn from_i128(n: i128) -> Option<Number> {
        finite(cx().from_i128(n))
    }

    /// Converts like `BigDecimal.valueOf(double)`: through the shortest decimal string that
    /// round-trips, so a JSON `0.1` becomes exactly `0.1`.
    pub fn from_f64(f: f64) -> Option<Number> {
        if !f.is_finite() {
            return None;
        }
        Number::parse(&format!("{f:?}"))
    }

    pub fn to_f64(self) -> f64 {
        self.to_string().parse::<f64>().unwrap_or(f64::NAN)
    }

    pub fn is_integer(self) -> bool {
        self.0.is_integer() || self.0.is_zero() || {
            // `is_integer` is false for e.g. 2.0 (exponent < 0); compare with the truncation.
            let t = self.round(0, RoundMode::Down);
            t.map(|t| t == self).unwrap_or(false)
        }
    }

    /// The value as an `i64` if it is a whole number in range.
    pub fn to_i64(self) -> Option<i64> {
        if !self.is_integer() {
            return None;
        }
        let whole = self.round(0, RoundMode::Down)?;
        let mut d = whole.0;
        let mut c = cx();
        c.rescale(&mut d, 0);
        if !d.is_finite() || d.exponent() != 0 {
            return None;
        }
        i64::try_from(d.coefficient()).ok()
    }

    /// Truncates towards zero and converts to `i64`; `None` when out of range.
    pub fn trunc_i64(self) -> Option<i64> {
        self.round(0, RoundMode::Down)?.to_i64()
    }

    pub fn is_zero(self) -> bool {
        self.0.is_zero()
    }

    pub fn is_negative(self) -> bool {
        self.0.is_negative() && !self.0.is_zero()
    }

    pub fn checked_add(self, o: Number) -> Option<Number> {
        finite(cx().add(self.0, o.0))
    }

    pub fn checked_sub(self, o: Number) -> Option<Number> {
        finite(cx().sub(self.0, o.0))
    }

    pub fn checked_mul(self, o: Number) -> Option<Number> {
        finite(cx().mul(self.0, o.0))
    }

    /// `None` for a zero divisor (FEEL gives null there).
    pub fn checked_div(self, o: Number) -> Option<Number> {
        if o.0.is_zero() {
            return None;
        }
        finite(cx().div(self.0, o.0))
    }

    pub fn negated(self) -> Number {
        Number(cx().minus(self.0))
    }

    pub fn abs(self) -> Number {
        Number(cx().abs(self.0))
    }

    /// FEEL `modulo`: the result has the sign of the divisor
    /// (`dividend - divisor * floor(dividend / divisor)`), computed exactly.
    pub fn modulo(self, divisor: Number) -> Option<Number> {
        if divisor.0.is_zero() {
            return None;
        }
        let mut c = cx();
        let r = c.rem(self.0, divisor.0);
        if !r.is_finite() {
            return None;
        }
        if !r.is_zero() && (r.is_negative() != divisor.0.is_negative()) {
            finite(c.add(r, divisor.0))
        } else {
            finite(r)
        }
    }

    /// Rounds to `scale` digits after the point with the given mode. `None` if the result
    /// cannot be represented (scale outside the decimal128 range).
    pub fn round(self, scale: i64, mode: RoundMode) -> Option<Number> {
        if !(-6111..=6176).contains(&scale) {
            return None;
        }
        let scale = scale as i32;
        if self.0.exponent() >= -scale {
            // Already at or coarser than the requested scale: nothing to round.
            return Some(self);
        }
        let mut c = cx();
        c.set_rounding(match mode {
            RoundMode::Up => Rounding::Up,
            RoundMode::Down => Rounding::Down,
            RoundMode::HalfUp => Rounding::HalfUp,
            RoundMode::HalfDown => Rounding::HalfDown,
            RoundMode::HalfEven => Rounding::HalfEven,
            RoundMode::Floor => Rounding::Floor,
            RoundMode::Ceiling => Rounding::Ceiling,
        });
        let mut target = Decimal128::ONE;
        c.set_exponent(&mut target, -scale);
        let r = c.quantize(self.0, target);
        if c.status().invalid_operation() {
            return None;
        }
        finite(r)
    }

    /// `self ** exp`, correctly rounded to 34 digits.
    pub fn pow(self, exp: Number) -> Option<Number> {
        if self.0.is_zero() && exp.is_negative() {
            return None;
        }
        let mut c = math_context()?;
        let mut x = Wide::from(self.0);
        let y = Wide::from(exp.0);
        c.pow(&mut x, &y);
        if c.status().invalid_operation() || !x.is_finite() {
            return None;
        }
        finite(x.to_decimal128())
    }

    pub fn sqrt(self) -> Option<Number> {
        if self.is_negative() {
            return None;
        }
        self.wide(|c, x| c.sqrt(x))
    }

    pub fn ln(self) -> Option<Number> {
        if !self.0.is_positive() || self.0.is_zero() {
            return None;
        }
        self.wide(|c, x| c.ln(x))
    }

    pub fn exp(self) -> Option<Number> {
        self.wide(|c, x| c.exp(x))
    }

    fn wide(self, f: impl FnOnce(&mut Context<Wide>, &mut Wide)) -> Option<Number> {
        let mut c = math_context()?;
        let mut x = Wide::from(self.0);
        f(&mut c, &mut x);
        if c.status().invalid_operation() || !x.is_finite() {
            return None;
        }
        finite(x.to_decimal128())
    }

    /// The number without trailing zeros (`2.50` -> `2.5`, `100` stays `100` in output).
    pub fn normalized(self) -> Number {
        Number(cx().reduce(self.0))
    }

    /// Number of digits after the decimal point in the canonical form (may be negative).
    pub fn scale(self) -> i32 {
        -self.0.exponent()
    }

    pub fn signum(self) -> i32 {
        if self.0.is_zero() {
            0
        } else if self.0.is_negative() {
            -1
        } else {
            1
        }
    }
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
        // Numbers are always finite, so the partial order is total here.
        cx().partial_cmp(self.0, other.0).unwrap_or(Ordering::Equal)
    }
}

impl fmt::Display for Number {
    /// Plain notation, never scientific, keeping the scale the arithmetic produced (like
    /// `BigDecimal.toPlainString`), except that whole numbers with a positive exponent are
    /// written out (`1E+3` -> `1000`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_zero() && self.0.exponent() >= 0 {
            return f.write_str("0");
        }
        let s = self.0.to_standard_notation_string();
        // decNumber keeps the sign of a negative zero; FEEL has no negative zero.
        if self.0.is_zero() {
            return f.write_str(s.trim_start_matches('-'));
        }
        f.write_str(&s)
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::hash::Hash for Number {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.normalized().to_string().hash(state);
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
