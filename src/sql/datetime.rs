//! PostgreSQL's `timestamp`, `timestamptz` and `date` values: their text forms as
//! PostgreSQL reads and writes them (ISO DateStyle), their binary epoch, and the session
//! `TimeZone` a `timestamptz` is read and shown in.
//!
//! A timestamp is microseconds since 1970-01-01 00:00 (a `timestamptz` an instant in
//! UTC, a `timestamp` a wall-clock reading), a date days since 1970-01-01; both are
//! stored as Table Store Integers, so stored keys sort as the values do.
//! `infinity` and `-infinity` are the extreme integers, as PostgreSQL keeps them.

use super::sql_types::{SqlError, SqlResult};
use crate::sqlstate::SqlState;
use chrono::{
    DateTime, Datelike, FixedOffset, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset,
    TimeZone as _, Timelike, Utc,
};
use chrono_tz::OffsetName as _;
use std::fmt::Write as _;

/// Microseconds in a day.
pub const MICROS_PER_DAY: i64 = 86_400_000_000;
/// Days from 1970-01-01 to 2000-01-01, PostgreSQL's binary epoch.
pub const PG_EPOCH_DAYS: i64 = 10_957;
/// Microseconds from 1970-01-01 to 2000-01-01.
pub const PG_EPOCH_MICROS: i64 = PG_EPOCH_DAYS * MICROS_PER_DAY;

/// The timestamps `infinity` and `-infinity`.
pub const TIMESTAMP_INFINITY: i64 = i64::MAX;
pub const TIMESTAMP_MINUS_INFINITY: i64 = i64::MIN;
/// The dates `infinity` and `-infinity`.
pub const DATE_INFINITY: i32 = i32::MAX;
pub const DATE_MINUS_INFINITY: i32 = i32::MIN;

/// The session's `TimeZone`: a zone of the IANA database or a fixed offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeZone {
    Named(chrono_tz::Tz),
    Fixed(FixedOffset, FixedName),
}

/// What a fixed-offset zone is called where a time shows its zone's abbreviation
/// (`to_char`'s `TZ`), as PostgreSQL calls a POSIX zone by its name part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixedName {
    /// A bare offset (`+05:30`) or an abbreviation `AT TIME ZONE` names: nothing.
    Bare,
    /// `UTC+3`: `UTC`.
    Utc,
    /// `GMT-2`: `GMT`.
    Gmt,
    /// `<-05>+05`, as `SET TIME ZONE -5` names it: its offset, `-05`.
    Offset,
}

impl TimeZone {
    fn fixed(east: i32, name: FixedName) -> Option<TimeZone> {
        FixedOffset::east_opt(east).map(|offset| TimeZone::Fixed(offset, name))
    }
}

impl Default for TimeZone {
    fn default() -> Self {
        TimeZone::Named(chrono_tz::UTC)
    }
}

impl TimeZone {
    /// The zone a `TimeZone` setting names: an IANA name (any case), `UTC`/`GMT`/`Z`, or
    /// a POSIX-style `UTC+3`/`GMT-05:30`/`+05:30` (whose sign, as in POSIX and
    /// PostgreSQL, is west of Greenwich: `UTC+3` is three hours behind UTC).
    pub fn parse(name: &str) -> Option<TimeZone> {
        let name = name.trim();
        if name.eq_ignore_ascii_case("z") || name.eq_ignore_ascii_case("zulu") {
            return Some(TimeZone::default());
        }
        if let Ok(zone) = chrono_tz::Tz::from_str_insensitive(name) {
            return Some(TimeZone::Named(zone));
        }
        // `<-05>+05`, as PostgreSQL shows a zone set by its offset.
        if let Some((_, west)) = name.strip_prefix('<').and_then(|rest| rest.split_once('>')) {
            return TimeZone::fixed(-parse_offset(west)?, FixedName::Offset);
        }
        let upper = name.to_ascii_uppercase();
        let (offset, fixed_name) = match (upper.strip_prefix("UTC"), upper.strip_prefix("GMT")) {
            (Some(offset), _) => (offset, FixedName::Utc),
            (_, Some(offset)) => (offset, FixedName::Gmt),
            _ => (upper.as_str(), FixedName::Bare),
        };
        TimeZone::fixed(-parse_offset(offset)?, fixed_name)
    }

    /// A zone `east` seconds ahead of UTC by the name PostgreSQL gives it
    /// (`SET TIME ZONE -5` is `<-05>+05`), which `parse` reads back.
    pub fn offset_name(east: i32) -> String {
        format!("<{}>{}", offset_text(east), offset_text(-east))
    }

    /// The zone `AT TIME ZONE` names: an abbreviation PostgreSQL knows by default
    /// (`EST`, `CET`, `PST`: fixed offsets), then a `TimeZone` name, then a bare POSIX
    /// offset (`+02` is two hours west of Greenwich, as in PostgreSQL).
    pub fn for_at_time_zone(name: &str) -> Option<TimeZone> {
        let name = name.trim();
        if let Some((_, east)) = ZONE_ABBREVIATIONS
            .iter()
            .find(|(abbreviation, _)| abbreviation.eq_ignore_ascii_case(name))
        {
            return TimeZone::fixed(*east, FixedName::Bare);
        }
        TimeZone::parse(name).or_else(|| TimeZone::fixed(-parse_offset(name)?, FixedName::Bare))
    }

    /// Whether the zone is UTC under another name (`Etc/UTC`, `GMT`, `Zulu`, `UTC+0`):
    /// one in which no time moves (`query::pg_time_zone` leaves its plans alone).
    pub fn is_utc(&self) -> bool {
        const UTC_NAMES: [&str; 16] = [
            "UTC",
            "Etc/UTC",
            "UCT",
            "Etc/UCT",
            "GMT",
            "Etc/GMT",
            "GMT0",
            "Etc/GMT0",
            "GMT+0",
            "Etc/GMT+0",
            "GMT-0",
            "Etc/GMT-0",
            "Greenwich",
            "Etc/Greenwich",
            "Universal",
            "Etc/Universal",
        ];
        match self {
            TimeZone::Named(zone) => {
                UTC_NAMES.contains(&zone.name()) || matches!(zone.name(), "Zulu" | "Etc/Zulu")
            }
            TimeZone::Fixed(offset, _) => offset.local_minus_utc() == 0,
        }
    }

    /// The offset east of UTC, in seconds, and the abbreviation (`CEST`, `+0530`) a
    /// `timestamptz` of `micros` is shown with, as `to_char`'s `OF` and `TZ` show it.
    pub fn shown_at(&self, micros: i64) -> SqlResult<(i32, String)> {
        let at = naive(micros)?;
        let east = self.offset_at(at);
        let abbreviation = match self {
            TimeZone::Named(zone) => zone
                .offset_from_utc_datetime(&at)
                .abbreviation()
                .map_or_else(|| offset_text(east), str::to_string),
            TimeZone::Fixed(_, FixedName::Bare) => String::new(),
            TimeZone::Fixed(_, FixedName::Utc) => "UTC".into(),
            TimeZone::Fixed(_, FixedName::Gmt) => "GMT".into(),
            TimeZone::Fixed(_, FixedName::Offset) => offset_text(east),
        };
        Ok((east, abbreviation))
    }

    /// The offset east of UTC, in seconds, at the UTC instant `at`.
    fn offset_at(&self, at: NaiveDateTime) -> i32 {
        match self {
            // The session's usual zone, without a look-up per value shown.
            TimeZone::Named(chrono_tz::UTC) => 0,
            TimeZone::Named(zone) => zone.offset_from_utc_datetime(&at).fix().local_minus_utc(),
            TimeZone::Fixed(offset, _) => offset.local_minus_utc(),
        }
    }

    /// The offset east of UTC, in seconds, of the wall-clock time `local`. A time a
    /// change of clocks skips is read with the offset before the change, one it repeats
    /// with the offset after it, as PostgreSQL reads them.
    fn offset_of_local(&self, local: NaiveDateTime) -> i32 {
        let TimeZone::Named(zone) = self else {
            return self.offset_at(local);
        };
        match zone.offset_from_local_datetime(&local) {
            LocalResult::Single(offset) => offset.fix().local_minus_utc(),
            LocalResult::Ambiguous(_, later) => later.fix().local_minus_utc(),
            // Skipped: the offset in force an hour before.
            LocalResult::None => zone
                .offset_from_utc_datetime(
                    &local
                        .checked_sub_signed(chrono::Duration::hours(3))
                        .unwrap_or(local),
                )
                .fix()
                .local_minus_utc(),
        }
    }
}

/// Abbreviations of PostgreSQL's default set (`pg_timezone_abbrevs`) and their offsets
/// east of UTC, in seconds.
const ZONE_ABBREVIATIONS: &[(&str, i32)] = &[
    ("UTC", 0),
    ("UT", 0),
    ("GMT", 0),
    ("WET", 0),
    ("WEST", 3600),
    ("BST", 3600),
    ("CET", 3600),
    ("CEST", 7200),
    ("WAT", 3600),
    ("EET", 7200),
    ("EEST", 10800),
    ("CAT", 7200),
    ("SAST", 7200),
    ("IST", 7200),
    ("EAT", 10800),
    ("MSK", 10800),
    ("AWST", 28800),
    ("JST", 32400),
    ("KST", 32400),
    ("ACST", 34200),
    ("ACDT", 37800),
    ("AEST", 36000),
    ("AEDT", 39600),
    ("NZST", 43200),
    ("NZDT", 46800),
    ("HST", -36000),
    ("AKST", -32400),
    ("AKDT", -28800),
    ("PST", -28800),
    ("PDT", -25200),
    ("MST", -25200),
    ("MDT", -21600),
    ("CST", -21600),
    ("CDT", -18000),
    ("EST", -18000),
    ("EDT", -14400),
    ("AST", -14400),
    ("ADT", -10800),
];

/// `+3`, `-05`, `+0530`, `+05:30`, `-05:30:15`: seconds east of UTC.
/// An offset east of UTC as PostgreSQL names a zone by it: `+05`, `-05:30`.
fn offset_text(east: i32) -> String {
    let sign = if east < 0 { '-' } else { '+' };
    let (hours, minutes) = (east.abs() / 3600, east.abs() % 3600 / 60);
    match minutes {
        0 => format!("{sign}{hours:02}"),
        _ => format!("{sign}{hours:02}:{minutes:02}"),
    }
}

fn parse_offset(text: &str) -> Option<i32> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let mut parts = [0i32; 3];
    let fields: Vec<&str> = rest.split(':').collect();
    match fields.as_slice() {
        [compact] if compact.len() == 4 && compact.bytes().all(|b| b.is_ascii_digit()) => {
            parts[0] = compact[..2].parse().ok()?;
            parts[1] = compact[2..].parse().ok()?;
        }
        fields if (1..=3).contains(&fields.len()) => {
            for (part, field) in parts.iter_mut().zip(fields) {
                if field.is_empty() || field.len() > 2 || !field.bytes().all(|b| b.is_ascii_digit())
                {
                    return None;
                }
                *part = field.parse().ok()?;
            }
        }
        _ => return None,
    }
    if parts[0] > 15 || parts[1] > 59 || parts[2] > 59 {
        return None;
    }
    Some(sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]))
}

/// Which of the three types a text is read as, for its messages and zone handling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Timestamp,
    TimestampTz,
    Date,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Timestamp => "timestamp",
            Kind::TimestampTz => "timestamp with time zone",
            Kind::Date => "date",
        }
    }
}

fn invalid(kind: Kind, text: &str) -> SqlError {
    SqlError::new(
        SqlState::InvalidDatetimeFormat,
        format!("invalid input syntax for type {}: \"{text}\"", kind.name()),
    )
}

fn field_out_of_range(text: &str) -> SqlError {
    SqlError::new(
        SqlState::DatetimeFieldOverflow,
        format!("date/time field value out of range: \"{text}\""),
    )
}

/// 22008 for a value past the range pgwide keeps.
pub fn timestamp_out_of_range() -> SqlError {
    SqlError::new(SqlState::DatetimeFieldOverflow, "timestamp out of range")
}

fn date_out_of_range() -> SqlError {
    SqlError::new(SqlState::DatetimeFieldOverflow, "date out of range")
}

/// A parsed text: a wall-clock time and the zone offset it gave, if any.
enum Parsed {
    At(NaiveDateTime, Option<i32>),
    Infinity,
    MinusInfinity,
}

/// Reads PostgreSQL's ISO forms: `2024-03-01`, `2024-03-01 10:00[:05[.123456]]`, a `T`
/// for the space, a zone (`Z`, `+02`, `+05:30`, `UTC`, `Europe/Paris`), `BC`/`AD`, and
/// the words `epoch`, `infinity`, `-infinity`, `now`, `today`, `tomorrow`, `yesterday`.
fn parse(text: &str, kind: Kind) -> SqlResult<Parsed> {
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    let today = || Utc::now().date_naive();
    let midnight = |date: NaiveDate| date.and_time(NaiveTime::MIN);
    match lower.as_str() {
        "infinity" | "+infinity" => return Ok(Parsed::Infinity),
        "-infinity" => return Ok(Parsed::MinusInfinity),
        "epoch" => return Ok(Parsed::At(DateTime::UNIX_EPOCH.naive_utc(), Some(0))),
        "now" => return Ok(Parsed::At(Utc::now().naive_utc(), Some(0))),
        "today" => return Ok(Parsed::At(midnight(today()), None)),
        "tomorrow" => return Ok(Parsed::At(midnight(today() + chrono::Days::new(1)), None)),
        "yesterday" => return Ok(Parsed::At(midnight(today() - chrono::Days::new(1)), None)),
        _ => {}
    }
    let mut rest = trimmed;
    let mut before_christ = false;
    for (suffix, bc) in [(" BC", true), (" AD", false)] {
        // `get`: the text may end in a character of several bytes.
        let tail = rest.len().checked_sub(3).and_then(|at| rest.get(at..));
        if rest.len() > 3 && tail.is_some_and(|tail| tail.eq_ignore_ascii_case(suffix)) {
            rest = rest[..rest.len() - 3].trim_end();
            before_christ = bc;
        }
    }
    let (date, after_date) = parse_date_part(rest).ok_or_else(|| invalid(kind, text))?;
    let (year, month, day) = date;
    let year = if before_christ { 1 - year } else { year };
    let date = NaiveDate::from_ymd_opt(year, month, day).ok_or_else(|| field_out_of_range(text))?;
    let after_date = after_date.trim_start_matches([' ', 'T', 't']);
    let (time, after_time) = if after_date.starts_with(|c: char| c.is_ascii_digit()) {
        parse_time_part(after_date, text, kind)?
    } else {
        (chrono::Duration::zero(), after_date)
    };
    let zone = after_time.trim();
    let offset = if zone.is_empty() {
        None
    } else if let Some(east) = parse_offset(zone) {
        Some(east)
    } else if zone.eq_ignore_ascii_case("z") {
        Some(0)
    } else {
        let named = TimeZone::parse(zone).ok_or_else(|| invalid(kind, text))?;
        let local = midnight(date) + time;
        Some(named.offset_of_local(local))
    };
    Ok(Parsed::At(midnight(date) + time, offset))
}

/// `YYYY-MM-DD` (a year of 4 or more digits) and what follows it.
fn parse_date_part(text: &str) -> Option<((i32, u32, u32), &str)> {
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let year_len = digits(text);
    if year_len < 1 || text.as_bytes().get(year_len) != Some(&b'-') {
        return None;
    }
    let year: i32 = text[..year_len].parse().ok()?;
    let rest = &text[year_len + 1..];
    let month_len = digits(rest);
    if !(1..=2).contains(&month_len) || rest.as_bytes().get(month_len) != Some(&b'-') {
        return None;
    }
    let month: u32 = rest[..month_len].parse().ok()?;
    let rest = &rest[month_len + 1..];
    let day_len = digits(rest);
    if !(1..=2).contains(&day_len) {
        return None;
    }
    let day: u32 = rest[..day_len].parse().ok()?;
    Some(((year, month, day), &rest[day_len..]))
}

/// `HH:MM[:SS[.fraction]]` as a duration since midnight (24:00:00 allowed), and what
/// follows it.
fn parse_time_part<'a>(
    text: &'a str,
    whole: &str,
    kind: Kind,
) -> SqlResult<(chrono::Duration, &'a str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == ':' || c == '.'))
        .unwrap_or(text.len());
    let (clock, rest) = text.split_at(end);
    let (clock, fraction) = match clock.split_once('.') {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None => (clock, None),
    };
    let fields: Vec<&str> = clock.split(':').collect();
    if !(2..=3).contains(&fields.len())
        || fields.iter().any(|f| f.is_empty() || f.len() > 2)
        || (fraction.is_some() && fields.len() != 3)
    {
        return Err(invalid(kind, whole));
    }
    let number = |f: &str| f.parse::<i64>().map_err(|_| invalid(kind, whole));
    let (hours, minutes) = (number(fields[0])?, number(fields[1])?);
    let seconds = match fields.get(2) {
        Some(s) => number(s)?,
        None => 0,
    };
    let mut micros = 0i64;
    if let Some(fraction) = fraction {
        if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid(kind, whole));
        }
        // Microseconds, the seventh digit rounding half up as PostgreSQL does.
        let mut padded: String = fraction.chars().take(7).collect();
        while padded.len() < 7 {
            padded.push('0');
        }
        let tenths: i64 = padded.parse().map_err(|_| invalid(kind, whole))?;
        micros = (tenths + 5) / 10;
    }
    let total = (hours * 3600 + minutes * 60 + seconds) * 1_000_000 + micros;
    if hours > 24 || minutes > 59 || seconds > 60 || total > MICROS_PER_DAY {
        return Err(field_out_of_range(whole));
    }
    Ok((chrono::Duration::microseconds(total), rest))
}

fn micros_of(at: NaiveDateTime) -> SqlResult<i64> {
    let micros = at.and_utc().timestamp_micros();
    // chrono's range is narrower than i64 microseconds; the extremes mean infinity.
    if micros == i64::MAX || micros == i64::MIN {
        return Err(timestamp_out_of_range());
    }
    Ok(micros)
}

/// A `timestamp` (`zone` None) or a `timestamptz` read in `zone` from PostgreSQL's text.
pub fn parse_timestamp(text: &str, zone: Option<&TimeZone>) -> SqlResult<i64> {
    let kind = match zone {
        Some(_) => Kind::TimestampTz,
        None => Kind::Timestamp,
    };
    match parse(text, kind)? {
        Parsed::Infinity => Ok(TIMESTAMP_INFINITY),
        Parsed::MinusInfinity => Ok(TIMESTAMP_MINUS_INFINITY),
        // A timestamp without time zone ignores any zone given, as PostgreSQL does.
        Parsed::At(local, _) if zone.is_none() => micros_of(local),
        Parsed::At(local, offset) => {
            let east = offset.unwrap_or_else(|| zone.map_or(0, |z| z.offset_of_local(local)));
            micros_of(shifted(local, -east)?)
        }
    }
}

/// A `date` read from PostgreSQL's text (a time given after it is ignored, as there).
pub fn parse_date(text: &str) -> SqlResult<i32> {
    match parse(text, Kind::Date)? {
        Parsed::Infinity => Ok(DATE_INFINITY),
        Parsed::MinusInfinity => Ok(DATE_MINUS_INFINITY),
        Parsed::At(at, _) => date_of_days(
            at.date()
                .signed_duration_since(NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default())
                .num_days(),
        ),
    }
}

fn date_of_days(days: i64) -> SqlResult<i32> {
    i32::try_from(days)
        .ok()
        .filter(|d| *d != DATE_INFINITY && *d != DATE_MINUS_INFINITY)
        .ok_or_else(date_out_of_range)
}

/// The date a timestamp falls on (for `timestamp::date`; a `timestamptz` first moved to
/// the zone's wall clock with `to_local`).
pub fn date_of_timestamp(micros: i64) -> SqlResult<i32> {
    match micros {
        TIMESTAMP_INFINITY => Ok(DATE_INFINITY),
        TIMESTAMP_MINUS_INFINITY => Ok(DATE_MINUS_INFINITY),
        _ => date_of_days(micros.div_euclid(MICROS_PER_DAY)),
    }
}

/// Midnight of a date as a timestamp.
pub fn timestamp_of_date(days: i32) -> SqlResult<i64> {
    match days {
        DATE_INFINITY => Ok(TIMESTAMP_INFINITY),
        DATE_MINUS_INFINITY => Ok(TIMESTAMP_MINUS_INFINITY),
        _ => i64::from(days)
            .checked_mul(MICROS_PER_DAY)
            .ok_or_else(timestamp_out_of_range),
    }
}

/// A `timestamptz` instant as the wall-clock `timestamp` it is in `zone`.
pub fn to_local(micros: i64, zone: &TimeZone) -> SqlResult<i64> {
    if micros == TIMESTAMP_INFINITY || micros == TIMESTAMP_MINUS_INFINITY {
        return Ok(micros);
    }
    let at = naive(micros)?;
    micros_of(shifted(at, zone.offset_at(at))?)
}

/// A wall-clock `timestamp` in `zone` as the `timestamptz` instant it names.
pub fn from_local(micros: i64, zone: &TimeZone) -> SqlResult<i64> {
    if micros == TIMESTAMP_INFINITY || micros == TIMESTAMP_MINUS_INFINITY {
        return Ok(micros);
    }
    let local = naive(micros)?;
    micros_of(shifted(local, -zone.offset_of_local(local))?)
}

/// `at` moved by `seconds`; past the calendar's ends is out of range (22008).
fn shifted(at: NaiveDateTime, seconds: i32) -> SqlResult<NaiveDateTime> {
    at.checked_add_signed(chrono::Duration::seconds(i64::from(seconds)))
        .ok_or_else(timestamp_out_of_range)
}

/// `from_local`, except that a wall-clock time the zone repeats is read with the
/// offset in force at the instant `near` when it is one of the two, as PostgreSQL's
/// `date_trunc` keeps a time's own offset.
pub fn from_local_near(micros: i64, zone: &TimeZone, near: i64) -> SqlResult<i64> {
    let (TimeZone::Named(named), Ok(local), Ok(near)) = (zone, naive(micros), naive(near)) else {
        return from_local(micros, zone);
    };
    if let LocalResult::Ambiguous(earlier, later) = named.offset_from_local_datetime(&local) {
        let near_offset = zone.offset_at(near);
        for offset in [earlier, later] {
            let east = offset.fix().local_minus_utc();
            if east == near_offset {
                return micros_of(shifted(local, -east)?);
            }
        }
    }
    from_local(micros, zone)
}

/// A wall-clock `timestamp` `months` later (earlier if negative), on the same day of
/// the month or, past the end of a shorter month, its last day, as PostgreSQL adds
/// months.
pub fn add_months(micros: i64, months: i32) -> SqlResult<i64> {
    let at = naive(micros)?;
    let moved = if months >= 0 {
        at.checked_add_months(chrono::Months::new(months.unsigned_abs()))
    } else {
        at.checked_sub_months(chrono::Months::new(months.unsigned_abs()))
    };
    micros_of(moved.ok_or_else(timestamp_out_of_range)?)
}

fn naive(micros: i64) -> SqlResult<NaiveDateTime> {
    DateTime::from_timestamp_micros(micros)
        .map(|at| at.naive_utc())
        .ok_or_else(timestamp_out_of_range)
}

/// A timestamp in PostgreSQL's ISO text: `2024-03-01 10:00:05.5`, with `+01`
/// (`+05:30`) when `zone` is given, shown in that zone.
pub fn format_timestamp(micros: i64, zone: Option<&TimeZone>) -> SqlResult<String> {
    match micros {
        TIMESTAMP_INFINITY => return Ok("infinity".into()),
        TIMESTAMP_MINUS_INFINITY => return Ok("-infinity".into()),
        _ => {}
    }
    let utc = naive(micros)?;
    let east = zone.map_or(0, |z| z.offset_at(utc));
    let local = shifted(utc, east)?;
    // Written digit by digit: a range read shows one of these per row, and `write!`
    // with its format machinery made a timestamp key's range 12% slower than a bigint's.
    let mut text = String::with_capacity(32);
    let (year, bc) = display_year(local.year());
    if year > 9999 {
        let _ = write!(text, "{year}");
    } else {
        push_digits(&mut text, year as u32, 4);
    }
    text.push('-');
    push_digits(&mut text, local.month(), 2);
    text.push('-');
    push_digits(&mut text, local.day(), 2);
    text.push(' ');
    push_digits(&mut text, local.hour(), 2);
    text.push(':');
    push_digits(&mut text, local.minute(), 2);
    text.push(':');
    push_digits(&mut text, local.second(), 2);
    let mut fraction = micros.rem_euclid(1_000_000) as u32;
    if fraction != 0 {
        // Microseconds without their trailing zeros.
        let mut width = 6;
        while fraction.is_multiple_of(10) {
            fraction /= 10;
            width -= 1;
        }
        text.push('.');
        push_digits(&mut text, fraction, width);
    }
    if zone.is_some() {
        let sign = if east < 0 { '-' } else { '+' };
        let east = east.unsigned_abs();
        let _ = write!(text, "{sign}{:02}", east / 3600);
        if !east.is_multiple_of(3600) {
            let _ = write!(text, ":{:02}", east % 3600 / 60);
            if !east.is_multiple_of(60) {
                let _ = write!(text, ":{:02}", east % 60);
            }
        }
    }
    if bc {
        text.push_str(" BC");
    }
    Ok(text)
}

/// Appends `value` zero-padded to `width` digits.
fn push_digits(text: &mut String, value: u32, width: usize) {
    let mut digits = [b'0'; 10];
    let mut rest = value;
    let mut at = digits.len();
    while rest > 0 && at > 0 {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    let start = (digits.len() - width).min(at);
    text.extend(digits[start..].iter().map(|&d| char::from(d)));
}

/// A date in PostgreSQL's ISO text, `2024-03-01`.
pub fn format_date(days: i32) -> SqlResult<String> {
    match days {
        DATE_INFINITY => return Ok("infinity".into()),
        DATE_MINUS_INFINITY => return Ok("-infinity".into()),
        _ => {}
    }
    let date = NaiveDate::from_ymd_opt(1970, 1, 1)
        .and_then(|epoch| epoch.checked_add_signed(chrono::Duration::days(i64::from(days))))
        .ok_or_else(date_out_of_range)?;
    let (year, bc) = display_year(date.year());
    let mut text = format!("{year:04}-{:02}-{:02}", date.month(), date.day());
    if bc {
        text.push_str(" BC");
    }
    Ok(text)
}

/// The year as written with `BC`: there is no year 0, 1 BC comes before 1 AD.
fn display_year(year: i32) -> (i32, bool) {
    if year <= 0 {
        (1 - year, true)
    } else {
        (year, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(name: &str) -> TimeZone {
        TimeZone::parse(name).expect(name)
    }

    #[test]
    fn the_ends_of_the_calendar_are_out_of_range_in_any_zone() {
        let last = NaiveDateTime::MAX.and_utc().timestamp_micros() - 1;
        let first = NaiveDateTime::MIN.and_utc().timestamp_micros() + 1;
        let in_range_or_22008 = |result: SqlResult<String>| match result {
            Ok(_) => {}
            Err(e) => assert_eq!(e.code(), "22008", "{e:?}"),
        };
        for name in ["Asia/Tokyo", "America/New_York", "+05:30", "UTC+3"] {
            let z = zone(name);
            for micros in [first, last] {
                in_range_or_22008(to_local(micros, &z).map(|m| m.to_string()));
                in_range_or_22008(from_local(micros, &z).map(|m| m.to_string()));
                in_range_or_22008(format_timestamp(micros, Some(&z)));
            }
        }
        // Tokyo is ahead: the last instant has no wall-clock time there.
        assert!(to_local(last, &zone("Asia/Tokyo")).is_err());
    }

    #[test]
    fn timestamps_read_and_print_as_postgres_does() {
        let utc = TimeZone::default();
        let cases = [
            ("2024-03-01 10:00:05.5", "2024-03-01 10:00:05.5+00"),
            ("2024-03-01T10:00:05Z", "2024-03-01 10:00:05+00"),
            ("2024-03-01 12:00+02", "2024-03-01 10:00:00+00"),
            ("2024-03-01 12:00:00 +05:30", "2024-03-01 06:30:00+00"),
            ("2024-03-01", "2024-03-01 00:00:00+00"),
            ("  2024-3-1 1:2:3.0000004 ", "2024-03-01 01:02:03+00"),
            ("2024-03-01 23:59:59.9999996", "2024-03-02 00:00:00+00"),
            ("2024-03-01 24:00", "2024-03-02 00:00:00+00"),
            ("0001-01-01 BC", "0001-01-01 00:00:00+00 BC"),
            ("infinity", "infinity"),
            ("-INFINITY", "-infinity"),
            ("epoch", "1970-01-01 00:00:00+00"),
            ("2024-07-01 12:00 Europe/Paris", "2024-07-01 10:00:00+00"),
        ];
        for (input, shown) in cases {
            let micros = parse_timestamp(input, Some(&utc)).expect(input);
            assert_eq!(
                format_timestamp(micros, Some(&utc)).ok().as_deref(),
                Some(shown)
            );
        }
        let code = |text: &str| parse_timestamp(text, Some(&utc)).map_err(|e| e.code());
        assert_eq!(code("2024-13-01"), Err("22008"));
        assert_eq!(code("2024-02-30"), Err("22008"));
        assert_eq!(code("2024-02-01 25:00"), Err("22008"));
        assert_eq!(code("yesterday-ish"), Err("22007"));
        assert_eq!(code("2024-02-01 10:00 Mars/Olympus"), Err("22007"));
        assert_eq!(code(""), Err("22007"));
        assert_eq!(code("2024-01-01 é"), Err("22007"));
        assert_eq!(code("2024-01-01 日本"), Err("22007"));
        assert_eq!(code("2024-01-01 éé"), Err("22007"));
    }

    #[test]
    fn a_session_zone_reads_and_shows_local_times() {
        let paris = zone("europe/paris");
        let micros = parse_timestamp("2024-01-15 12:00", Some(&paris)).expect("parse");
        assert_eq!(
            format_timestamp(micros, Some(&TimeZone::default()))
                .ok()
                .as_deref(),
            Some("2024-01-15 11:00:00+00")
        );
        assert_eq!(
            format_timestamp(micros, Some(&paris)).ok().as_deref(),
            Some("2024-01-15 12:00:00+01")
        );
        let india = zone("Asia/Kolkata");
        assert_eq!(
            format_timestamp(micros, Some(&india)).ok().as_deref(),
            Some("2024-01-15 16:30:00+05:30")
        );
        // POSIX signs: UTC+3 is west of Greenwich.
        assert_eq!(
            format_timestamp(micros, Some(&zone("UTC+3")))
                .ok()
                .as_deref(),
            Some("2024-01-15 08:00:00-03")
        );
        // A timestamp without time zone ignores the zone it is given.
        let naive = parse_timestamp("2024-01-15 12:00+05", None).expect("parse");
        assert_eq!(
            format_timestamp(naive, None).ok().as_deref(),
            Some("2024-01-15 12:00:00")
        );
        assert_eq!(TimeZone::parse("Mars/Olympus"), None);
    }

    #[test]
    fn dates_read_and_print_as_postgres_does() {
        for (input, shown) in [
            ("2024-03-01", "2024-03-01"),
            ("1969-12-31", "1969-12-31"),
            ("2024-03-01 23:00:00", "2024-03-01"),
            ("0044-03-15 BC", "0044-03-15 BC"),
            ("infinity", "infinity"),
        ] {
            let days = parse_date(input).expect(input);
            assert_eq!(format_date(days).ok().as_deref(), Some(shown), "{input}");
        }
        assert_eq!(parse_date("1970-01-02").ok(), Some(1));
        assert_eq!(parse_date("1969-12-31").ok(), Some(-1));
        assert_eq!(parse_date("2024-02-30").map_err(|e| e.code()), Err("22008"));
    }

    #[test]
    fn local_and_utc_times_convert_both_ways() {
        let paris = zone("Europe/Paris");
        let instant = parse_timestamp("2024-07-01 10:00+00", Some(&paris)).expect("parse");
        let local = to_local(instant, &paris).expect("local");
        assert_eq!(
            format_timestamp(local, None).ok().as_deref(),
            Some("2024-07-01 12:00:00")
        );
        assert_eq!(from_local(local, &paris).ok(), Some(instant));
        assert_eq!(date_of_timestamp(-1).ok(), Some(-1));
        assert_eq!(timestamp_of_date(1).ok(), Some(MICROS_PER_DAY));
    }
}
