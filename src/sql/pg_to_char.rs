//! `to_char` of a date or time, with PostgreSQL's template patterns (`YYYY-MM-DD
//! HH24:MI:SS`, `FMDay, DDth Month`, `"quoted text"`). DataFusion's own `to_char` reads
//! chrono's `%Y` patterns and copied PostgreSQL's through as text, so
//! `to_char(ts, 'YYYY')` answered `YYYY`.
//!
//! A pattern is matched at each position, longest first, case-insensitively; the case
//! it is written in sets the case of names (`MONTH`, `Month`, `month`). `FM` before a
//! pattern drops its padding, `TH`/`th` after a number adds its ordinal suffix, text
//! in double quotes is copied (a backslash escapes a quote), and anything else is
//! copied as it is.

use chrono::{Datelike, NaiveDateTime, Timelike};
use std::fmt::Write as _;

/// The zone a `timestamptz` is shown in: its offset east of UTC and abbreviation.
#[derive(Debug, Clone)]
pub struct ShownZone {
    pub east_seconds: i32,
    pub abbreviation: String,
}

/// Every pattern, longest first among those sharing a beginning.
const PATTERNS: &[&str] = &[
    "A.D.", "A.M.", "AD", "AM", "B.C.", "BC", "CC", "DAY", "DDD", "DD", "DY", "D", "FF1", "FF2",
    "FF3", "FF4", "FF5", "FF6", "FX", "HH24", "HH12", "HH", "IDDD", "ID", "IW", "IYYY", "IYY",
    "IY", "I", "J", "MI", "MM", "MONTH", "MON", "MS", "OF", "P.M.", "PM", "Q", "RM", "SSSSS",
    "SSSS", "SS", "TZH", "TZM", "TZ", "US", "WW", "W", "Y,YYY", "YYYY", "YYY", "YY", "Y",
];

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const ROMAN_MONTHS: [&str; 12] = [
    "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII",
];

/// `at` (a wall-clock time; in `zone` for a `timestamptz`) formatted by `template`.
pub fn format(at: NaiveDateTime, zone: Option<&ShownZone>, template: &str) -> String {
    let mut out = String::with_capacity(template.len() + 8);
    let mut rest = template;
    let mut fill_mode = false;
    let mut bare_names = false;
    while let Some(first) = rest.chars().next() {
        if starts_with_ignoring_case(rest, "FM") {
            fill_mode = true;
            rest = &rest[2..];
            continue;
        }
        // `TM` (translated names, which the C locale leaves as they are) drops a name's
        // blank padding but not a number's zeros, as in PostgreSQL.
        if starts_with_ignoring_case(rest, "TM") {
            bare_names = true;
            rest = &rest[2..];
            continue;
        }
        if first == '"' {
            rest = quoted(&rest[1..], &mut out);
            continue;
        }
        if first == '\\' && rest[1..].starts_with('"') {
            out.push('"');
            rest = &rest[2..];
            continue;
        }
        let Some(pattern) = PATTERNS.iter().find(|p| starts_with_ignoring_case(rest, p)) else {
            out.push(first);
            rest = &rest[first.len_utf8()..];
            fill_mode = false;
            bare_names = false;
            continue;
        };
        let written = &rest[..pattern.len()];
        rest = &rest[pattern.len()..];
        let ordinal = ["TH", "th"]
            .into_iter()
            .find(|suffix| rest.starts_with(suffix));
        if let Some(suffix) = ordinal {
            rest = &rest[suffix.len()..];
        }
        let field = Field {
            at,
            zone,
            fill_mode,
            bare_names,
            case: Case::of(written),
        };
        let number = field.write(pattern, &mut out);
        if let (Some(suffix), Some(number)) = (ordinal, number) {
            let ending = ordinal_suffix(number);
            if suffix == "TH" {
                out.push_str(&ending.to_uppercase());
            } else {
                out.push_str(ending);
            }
        }
        fill_mode = false;
        bare_names = false;
    }
    out
}

fn starts_with_ignoring_case(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.is_char_boundary(prefix.len())
        && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Copies quoted text up to its closing quote; what follows it is returned.
fn quoted<'a>(text: &'a str, out: &mut String) -> &'a str {
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return &text[at + 1..],
            '\\' => {
                if let Some((_, escaped)) = chars.next() {
                    out.push(escaped);
                }
            }
            c => out.push(c),
        }
    }
    ""
}

/// `st`, `nd`, `rd` or `th`, as English writes ordinals.
pub(super) fn ordinal_suffix(number: i64) -> &'static str {
    match (number % 100, number % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    }
}

/// The case a name is written in, from the case of its pattern.
#[derive(Clone, Copy)]
enum Case {
    Upper,
    Capitalized,
    Lower,
}

impl Case {
    fn of(written: &str) -> Case {
        let mut letters = written.chars().filter(char::is_ascii_alphabetic);
        match (letters.next(), letters.next()) {
            (Some(a), _) if a.is_ascii_lowercase() => Case::Lower,
            (Some(_), Some(b)) if b.is_ascii_lowercase() => Case::Capitalized,
            _ => Case::Upper,
        }
    }

    fn apply(self, name: &str) -> String {
        match self {
            Case::Upper => name.to_uppercase(),
            Case::Capitalized => name.to_string(),
            Case::Lower => name.to_lowercase(),
        }
    }
}

struct Field<'a> {
    at: NaiveDateTime,
    zone: Option<&'a ShownZone>,
    fill_mode: bool,
    /// `TM`: names without their blank padding.
    bare_names: bool,
    case: Case,
}

impl Field<'_> {
    /// Writes one pattern's field; a number is returned for an ordinal suffix.
    fn write(&self, pattern: &str, out: &mut String) -> Option<i64> {
        let at = self.at;
        let (year, bc) = match at.year() {
            y if y <= 0 => (i64::from(1 - y), true),
            y => (i64::from(y), false),
        };
        let hour12 = match at.hour() % 12 {
            0 => 12,
            h => h,
        };
        let number = |value: i64, width: usize, out: &mut String| {
            self.number(value, width, out);
            Some(value)
        };
        match pattern {
            "HH" | "HH12" => number(i64::from(hour12), 2, out),
            "HH24" => number(i64::from(at.hour()), 2, out),
            "MI" => number(i64::from(at.minute()), 2, out),
            "SS" => number(i64::from(at.second()), 2, out),
            "MS" => number(i64::from(at.nanosecond() / 1_000_000), 3, out),
            "US" => number(i64::from(at.nanosecond() / 1_000), 6, out),
            "FF1" | "FF2" | "FF3" | "FF4" | "FF5" | "FF6" => {
                let digits = usize::from(pattern.as_bytes()[2] - b'0');
                let micros = i64::from(at.nanosecond() / 1_000);
                let value = micros / 10i64.pow(6 - digits as u32);
                let _ = write!(out, "{value:0digits$}");
                Some(value)
            }
            "SSSS" | "SSSSS" => number(i64::from(at.num_seconds_from_midnight()), 0, out),
            "AM" | "PM" | "A.M." | "P.M." => {
                let dotted = pattern.contains('.');
                let text = match (at.hour() < 12, dotted) {
                    (true, false) => "AM",
                    (false, false) => "PM",
                    (true, true) => "A.M.",
                    (false, true) => "P.M.",
                };
                out.push_str(&self.named(text));
                None
            }
            "AD" | "BC" | "A.D." | "B.C." => {
                let dotted = pattern.contains('.');
                let text = match (bc, dotted) {
                    (false, false) => "AD",
                    (true, false) => "BC",
                    (false, true) => "A.D.",
                    (true, true) => "B.C.",
                };
                out.push_str(&self.named(text));
                None
            }
            "Y,YYY" => {
                let _ = write!(out, "{},{:03}", year / 1000, year % 1000);
                Some(year)
            }
            "YYYY" => number(year, 4, out),
            "YYY" => number(year % 1000, 3, out),
            "YY" => number(year % 100, 2, out),
            "Y" => number(year % 10, 1, out),
            "IYYY" => number(i64::from(at.iso_week().year()), 4, out),
            "IYY" => number(i64::from(at.iso_week().year()) % 1000, 3, out),
            "IY" => number(i64::from(at.iso_week().year()) % 100, 2, out),
            "I" => number(i64::from(at.iso_week().year()) % 10, 1, out),
            "CC" => {
                let century = (year + 99) / 100;
                number(if bc { -century } else { century }, 2, out)
            }
            "MONTH" => {
                self.padded_name(MONTHS[at.month0() as usize], 9, out);
                None
            }
            "MON" => {
                out.push_str(&self.case.apply(&MONTHS[at.month0() as usize][..3]));
                None
            }
            "MM" => number(i64::from(at.month()), 2, out),
            "RM" => {
                self.padded_name(ROMAN_MONTHS[at.month0() as usize], 4, out);
                None
            }
            "DAY" => {
                let day = at.weekday().num_days_from_sunday() as usize;
                self.padded_name(DAYS[day], 9, out);
                None
            }
            "DY" => {
                let day = at.weekday().num_days_from_sunday() as usize;
                out.push_str(&self.case.apply(&DAYS[day][..3]));
                None
            }
            "DDD" => number(i64::from(at.ordinal()), 3, out),
            "IDDD" => {
                let week = i64::from(at.iso_week().week());
                let weekday = i64::from(at.weekday().number_from_monday());
                number((week - 1) * 7 + weekday, 3, out)
            }
            "DD" => number(i64::from(at.day()), 2, out),
            "D" => number(i64::from(at.weekday().number_from_sunday()), 1, out),
            "ID" => number(i64::from(at.weekday().number_from_monday()), 1, out),
            "W" => number(i64::from((at.day() - 1) / 7 + 1), 1, out),
            "WW" => number(i64::from((at.ordinal() - 1) / 7 + 1), 2, out),
            "IW" => number(i64::from(at.iso_week().week()), 2, out),
            "Q" => number(i64::from(at.month0() / 3 + 1), 1, out),
            "J" => number(i64::from(at.num_days_from_ce()) + 1_721_425, 0, out),
            "TZ" => {
                if let Some(zone) = self.zone {
                    out.push_str(&self.case.apply(&zone.abbreviation));
                }
                None
            }
            "OF" | "TZH" | "TZM" => {
                if let Some(zone) = self.zone {
                    offset(pattern, zone.east_seconds, out);
                }
                None
            }
            // FX (exact input matching) only matters to to_timestamp.
            _ => None,
        }
    }

    fn number(&self, value: i64, width: usize, out: &mut String) {
        let width = if self.fill_mode { 0 } else { width };
        if value < 0 {
            let _ = write!(out, "-{:0width$}", value.unsigned_abs());
        } else {
            let _ = write!(out, "{value:0width$}");
        }
    }

    fn named(&self, text: &str) -> String {
        match self.case {
            Case::Lower => text.to_lowercase(),
            _ => text.to_string(),
        }
    }

    /// A month or day name, blank-padded to `width` unless in fill mode or `TM`.
    fn padded_name(&self, name: &str, width: usize, out: &mut String) {
        let name = self.case.apply(name);
        if self.fill_mode || self.bare_names {
            out.push_str(&name);
        } else {
            let _ = write!(out, "{name:<width$}");
        }
    }
}

/// `OF` (`+02`, `+05:30`), `TZH` (`+02`) or `TZM` (`30`).
fn offset(pattern: &str, east_seconds: i32, out: &mut String) {
    let sign = if east_seconds < 0 { '-' } else { '+' };
    let east = east_seconds.unsigned_abs();
    let (hours, minutes) = (east / 3600, east % 3600 / 60);
    match pattern {
        "TZH" => {
            let _ = write!(out, "{sign}{hours:02}");
        }
        "TZM" => {
            let _ = write!(out, "{minutes:02}");
        }
        _ if minutes == 0 => {
            let _ = write!(out, "{sign}{hours:02}");
        }
        _ => {
            let _ = write!(out, "{sign}{hours:02}:{minutes:02}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f").expect("a test time")
    }

    #[test]
    fn patterns_are_postgresqls() {
        let t = at("2024-03-01 14:05:09.123456");
        assert_eq!(
            format(t, None, "YYYY-MM-DD HH24:MI:SS"),
            "2024-03-01 14:05:09"
        );
        assert_eq!(
            format(t, None, "FMDay, DDth FMMonth YYYY"),
            "Friday, 01st March 2024"
        );
        assert_eq!(
            format(t, None, "Day|Month|MON|mon|dy"),
            "Friday   |March    |MAR|mar|fri"
        );
        assert_eq!(format(t, None, "HH12:MI am MS US"), "02:05 pm 123 123456");
        assert_eq!(
            format(t, None, "\"Year\" YYYY, Q, IW, DDD, J"),
            "Year 2024, 1, 09, 061, 2460371"
        );
        assert_eq!(format(t, None, "FMDDth FMMMth"), "1st 3rd");
        assert_eq!(
            format(t, None, "TMMonth|TMDay|TMMON|tmmonth|TMDD"),
            "March|Friday|MAR|march|01"
        );
    }

    #[test]
    fn zones_show_only_for_timestamptz() {
        let t = at("2024-03-01 14:05:09");
        let utc = ShownZone {
            east_seconds: 0,
            abbreviation: "UTC".into(),
        };
        assert_eq!(format(t, Some(&utc), "HH24 TZ OF"), "14 UTC +00");
        assert_eq!(format(t, None, "HH24 TZ OF"), "14  ");
    }
}
