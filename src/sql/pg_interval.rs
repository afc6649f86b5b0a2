//! PostgreSQL's `interval` and `time` values, as its text forms read and write them
//! (IntervalStyle `postgres`, ISO DateStyle) and its binary forms carry them.
//!
//! An interval keeps months, days and microseconds apart, as PostgreSQL does: a month
//! is not a fixed number of days, nor a day of hours (across a DST change). A `time` is
//! microseconds since midnight, `24:00:00` included.

use super::sql_error::{SqlError, SqlResult};
use crate::sqlstate::SqlState;

const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_HOUR: i64 = 3_600 * MICROS_PER_SECOND;
const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;

/// An `interval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

fn invalid(ty: &str, text: &str) -> SqlError {
    SqlError::new(
        SqlState::InvalidDatetimeFormat,
        format!("invalid input syntax for type {ty}: \"{text}\""),
    )
}

fn out_of_range() -> SqlError {
    SqlError::new(SqlState::DatetimeFieldOverflow, "interval out of range")
}

impl Interval {
    /// A length of time in microseconds as `timestamp - timestamp` gives it: whole days
    /// as days, the rest as time (PostgreSQL's `interval_justify_hours`).
    pub fn from_micros(micros: i64) -> Interval {
        Interval {
            months: 0,
            days: (micros / MICROS_PER_DAY) as i32,
            micros: micros % MICROS_PER_DAY,
        }
    }

    /// `interval_send`: microseconds, days, months, big-endian.
    pub fn to_binary(self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&self.micros.to_be_bytes());
        out[8..12].copy_from_slice(&self.days.to_be_bytes());
        out[12..].copy_from_slice(&self.months.to_be_bytes());
        out
    }

    /// `interval_recv`.
    pub fn from_binary(raw: &[u8]) -> Option<Interval> {
        let raw: &[u8; 16] = raw.try_into().ok()?;
        Some(Interval {
            micros: i64::from_be_bytes(raw[..8].try_into().ok()?),
            days: i32::from_be_bytes(raw[8..12].try_into().ok()?),
            months: i32::from_be_bytes(raw[12..].try_into().ok()?),
        })
    }
}

/// The length an interval is compared and sorted by, as PostgreSQL's `interval_cmp`:
/// a month as 30 days, a day as 24 hours (so `1 mon` equals `30 days`).
pub fn span(interval: &Interval) -> i128 {
    (i128::from(interval.months) * 30 + i128::from(interval.days)) * i128::from(MICROS_PER_DAY)
        + i128::from(interval.micros)
}

/// An interval's text in IntervalStyle `postgres`: `1 year 2 mons -3 days +04:05:06.5`,
/// `00:00:00` for none.
pub fn format(interval: &Interval) -> String {
    let mut out = String::new();
    // Whether a part was written, and whether the last one was negative (a positive
    // part after it then says `+`).
    let mut written = false;
    let mut negative_before = false;
    let mut part = |out: &mut String, value: i64, unit: &str| {
        if value == 0 {
            return;
        }
        if written {
            out.push(' ');
        }
        if negative_before && value > 0 {
            out.push('+');
        }
        out.push_str(&format!(
            "{value} {unit}{}",
            if value != 1 { "s" } else { "" }
        ));
        negative_before = value < 0;
        written = true;
    };
    let months = i64::from(interval.months);
    part(&mut out, months / 12, "year");
    part(&mut out, months % 12, "mon");
    part(&mut out, i64::from(interval.days), "day");
    let micros = interval.micros;
    if micros != 0 || !written {
        if written {
            out.push(' ');
        }
        if micros < 0 {
            out.push('-');
        } else if negative_before {
            out.push('+');
        }
        out.push_str(&clock(micros.unsigned_abs(), true));
    }
    out
}

/// `HH:MM:SS` and the fraction without trailing zeros, of `micros`; hours past 24 when
/// `unbounded_hours`.
fn clock(micros: u64, unbounded_hours: bool) -> String {
    let hours = micros / MICROS_PER_HOUR as u64;
    let hours = if unbounded_hours { hours } else { hours % 25 };
    let minutes = micros / 60_000_000 % 60;
    let seconds = micros / 1_000_000 % 60;
    let fraction = micros % 1_000_000;
    let mut text = format!("{hours:02}:{minutes:02}:{seconds:02}");
    if fraction != 0 {
        let digits = format!("{fraction:06}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text
}

/// Reads an interval as `interval_in` does: number-and-unit pairs (`1 year 2 mons`,
/// `1.5 days`, `-3 hours`), a clock (`04:05:06.5`, `-1:30`), a bare number of seconds,
/// `ago`, and ISO 8601's `P1Y2M3DT4H5M6S`. 22007 for anything else.
pub fn parse(text: &str) -> SqlResult<Interval> {
    let trimmed = text.trim().to_ascii_lowercase();
    let body = trimmed.strip_prefix('@').unwrap_or(&trimmed).trim();
    if body.is_empty() {
        return Err(invalid("interval", text));
    }
    if let Some(iso) = body.strip_prefix('p') {
        return parse_iso(iso).ok_or_else(|| invalid("interval", text));
    }
    let mut sum = Sum::default();
    let tokens = tokens(body);
    let mut i = 0;
    let mut ago = false;
    while i < tokens.len() {
        let token = &tokens[i];
        if token == "ago" && i + 1 == tokens.len() {
            ago = true;
            i += 1;
            continue;
        }
        if token.contains(':') {
            sum.micros += parse_clock(token).ok_or_else(|| invalid("interval", text))? as f64;
            i += 1;
            continue;
        }
        let value: f64 = token.parse().map_err(|_| invalid("interval", text))?;
        let unit = tokens
            .get(i + 1)
            .filter(|u| u.starts_with(char::is_alphabetic));
        match unit {
            Some(unit) => {
                sum.add(value, unit)
                    .ok_or_else(|| invalid("interval", text))?;
                i += 2;
            }
            None => {
                // A bare number is seconds.
                sum.micros += value * MICROS_PER_SECOND as f64;
                i += 1;
            }
        }
    }
    let interval = sum.finish()?;
    Ok(match ago {
        true => Interval {
            months: interval.months.checked_neg().ok_or_else(out_of_range)?,
            days: interval.days.checked_neg().ok_or_else(out_of_range)?,
            micros: interval.micros.checked_neg().ok_or_else(out_of_range)?,
        },
        false => interval,
    })
}

/// The input split into numbers (with their sign), words and clocks.
fn tokens(body: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut current = String::new();
    let mut alphabetic = false;
    for c in body.chars() {
        let starts_other = !current.is_empty()
            && (c.is_alphabetic() != alphabetic || ((c == '-' || c == '+') && !alphabetic));
        if c.is_whitespace() || c == ',' || starts_other {
            if !current.is_empty() {
                tokens.push(std::mem::take(&mut current));
            }
            if c.is_whitespace() || c == ',' {
                continue;
            }
        }
        if current.is_empty() {
            alphabetic = c.is_alphabetic();
        }
        current.push(c);
    }
    if !current.is_empty() {
        tokens.push(current);
    }
    tokens
}

/// `[-]H:MM[:SS[.f]]` as microseconds.
fn parse_clock(token: &str) -> Option<i64> {
    let (negative, digits) = match token.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, token.strip_prefix('+').unwrap_or(token)),
    };
    let parts: Vec<&str> = digits.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    let hours: i64 = parts[0].parse().ok()?;
    let minutes: i64 = parts[1].parse().ok()?;
    let seconds: f64 = match parts.get(2) {
        Some(s) if s.bytes().all(|b| b.is_ascii_digit() || b == b'.') => s.parse().ok()?,
        Some(_) => return None,
        None => 0.0,
    };
    if !(0..60).contains(&minutes) || !(0.0..60.0).contains(&seconds) {
        return None;
    }
    let micros = hours.checked_mul(MICROS_PER_HOUR)?
        + minutes * 60 * MICROS_PER_SECOND
        + (seconds * MICROS_PER_SECOND as f64).round() as i64;
    Some(if negative { -micros } else { micros })
}

/// ISO 8601's `P[nY][nM][nW][nD][T[nH][nM][nS]]`, after the `P`.
fn parse_iso(iso: &str) -> Option<Interval> {
    let mut sum = Sum::default();
    let mut in_time = false;
    let mut number = String::new();
    for c in iso.chars() {
        match c {
            't' => in_time = true,
            c if c.is_ascii_digit() || c == '.' || c == '-' => number.push(c),
            unit => {
                let value: f64 = std::mem::take(&mut number).parse().ok()?;
                let unit = match (unit, in_time) {
                    ('y', false) => "year",
                    ('m', false) => "month",
                    ('w', false) => "week",
                    ('d', false) => "day",
                    ('h', true) => "hour",
                    ('m', true) => "minute",
                    ('s', true) => "second",
                    _ => return None,
                };
                sum.add(value, unit)?;
            }
        }
    }
    if !number.is_empty() {
        return None;
    }
    sum.finish().ok()
}

/// Parts summed as PostgreSQL does: a fraction of a year goes to months, of a month to
/// days (30 to a month), of a day to time (24 hours to a day).
#[derive(Default)]
struct Sum {
    months: f64,
    days: f64,
    micros: f64,
}

impl Sum {
    fn add(&mut self, value: f64, unit: &str) -> Option<()> {
        let unit = match unit {
            "ms" => "msec",
            "us" => "usec",
            unit => unit.trim_end_matches('s'),
        };
        match unit {
            "microsecond" | "usec" => self.micros += value,
            "millisecond" | "msec" => self.micros += value * 1_000.0,
            "second" | "sec" | "" => self.micros += value * MICROS_PER_SECOND as f64,
            "minute" | "min" | "m" => self.micros += value * 60.0 * MICROS_PER_SECOND as f64,
            "hour" | "hr" | "h" => self.micros += value * MICROS_PER_HOUR as f64,
            "day" | "d" => self.spill_days(value),
            "week" | "w" => self.spill_days(value * 7.0),
            "month" | "mon" => self.spill_months(value),
            "year" | "yr" | "y" => self.spill_months(value * 12.0),
            "decade" => self.spill_months(value * 120.0),
            "century" | "centurie" => self.spill_months(value * 1_200.0),
            "millennium" | "millennia" => self.spill_months(value * 12_000.0),
            _ => return None,
        }
        Some(())
    }

    fn spill_days(&mut self, days: f64) {
        let whole = days.trunc();
        self.days += whole;
        self.micros += (days - whole) * MICROS_PER_DAY as f64;
    }

    fn spill_months(&mut self, months: f64) {
        let whole = months.trunc();
        self.months += whole;
        self.spill_days((months - whole) * 30.0);
    }

    fn finish(self) -> SqlResult<Interval> {
        let fits32 = |v: f64| v.abs() <= f64::from(i32::MAX);
        if !fits32(self.months) || !fits32(self.days) || self.micros.abs() >= 9.2e18 {
            return Err(out_of_range());
        }
        Ok(Interval {
            months: self.months as i32,
            days: self.days as i32,
            micros: self.micros.round() as i64,
        })
    }
}

/// A `time`'s text, `HH:MM:SS[.ffffff]`.
pub fn format_time(micros: i64) -> String {
    clock(micros.clamp(0, MICROS_PER_DAY) as u64, false)
}

/// Reads a `time` as `time_in` does: `HH:MM[:SS[.f]]`, up to `24:00:00`. 22007 for
/// malformed text, 22008 for a field out of range.
pub fn parse_time(text: &str) -> SqlResult<i64> {
    let trimmed = text.trim();
    let parts: Vec<&str> = trimmed.split(':').collect();
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let well_formed = (2..=3).contains(&parts.len())
        && number(parts[0])
        && number(parts[1])
        && parts.get(2).is_none_or(|s| {
            let (whole, fraction) = s.split_once('.').unwrap_or((s, "0"));
            number(whole) && number(fraction)
        });
    if !well_formed {
        return Err(invalid("time", text));
    }
    let hours: i64 = parts[0].parse().map_err(|_| invalid("time", text))?;
    let minutes: i64 = parts[1].parse().map_err(|_| invalid("time", text))?;
    let seconds: f64 = parts
        .get(2)
        .map_or(Ok(0.0), |s| s.parse())
        .map_err(|_| invalid("time", text))?;
    let micros = hours * MICROS_PER_HOUR
        + minutes * 60 * MICROS_PER_SECOND
        + (seconds * MICROS_PER_SECOND as f64).round() as i64;
    if minutes > 59 || seconds >= 61.0 || micros > MICROS_PER_DAY || hours > 24 {
        return Err(SqlError::new(
            SqlState::DatetimeFieldOverflow,
            format!("date/time field value out of range: \"{text}\""),
        ));
    }
    Ok(micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        format(&parse(text).expect(text))
    }

    #[test]
    fn intervals_read_and_print_as_postgresql_does() {
        assert_eq!(round_trip("1 day 2 hours"), "1 day 02:00:00");
        assert_eq!(round_trip("1 year 2 months 3 days"), "1 year 2 mons 3 days");
        assert_eq!(round_trip("-1 days 2 hours"), "-1 days +02:00:00");
        assert_eq!(round_trip("1.5 days"), "1 day 12:00:00");
        assert_eq!(round_trip("1.5 months"), "1 mon 15 days");
        assert_eq!(round_trip("04:05:06.5"), "04:05:06.5");
        assert_eq!(round_trip("-1:30"), "-01:30:00");
        assert_eq!(round_trip("2 weeks ago"), "-14 days");
        assert_eq!(round_trip("0"), "00:00:00");
        assert_eq!(round_trip("90 minutes"), "01:30:00");
        assert_eq!(
            round_trip("P1Y2M3DT4H5M6S"),
            "1 year 2 mons 3 days 04:05:06"
        );
        assert_eq!(round_trip("1 mon -1 day"), "1 mon -1 days");
        assert_eq!(round_trip("100 hours"), "100:00:00");
        assert_eq!(round_trip("2ms"), "00:00:00.002");
        for bad in ["", "1 fortnight", "abc", "1:2:3:4", "P1X"] {
            assert_eq!(parse(bad).unwrap_err().code(), "22007", "{bad}");
        }
        let i = parse("1 year 2 days 03:00:00.000001").unwrap();
        assert_eq!(Interval::from_binary(&i.to_binary()), Some(i));
        assert_eq!(
            format(&Interval::from_micros(-(MICROS_PER_DAY + 1))),
            "-1 days -00:00:00.000001"
        );
    }

    #[test]
    fn times_read_and_print_as_postgresql_does() {
        assert_eq!(format_time(parse_time("10:00").unwrap()), "10:00:00");
        assert_eq!(
            format_time(parse_time(" 23:59:59.5 ").unwrap()),
            "23:59:59.5"
        );
        assert_eq!(format_time(parse_time("24:00:00").unwrap()), "24:00:00");
        assert_eq!(parse_time("25:00").unwrap_err().code(), "22008");
        assert_eq!(parse_time("10").unwrap_err().code(), "22007");
        assert_eq!(parse_time("ab:cd").unwrap_err().code(), "22007");
    }
}
