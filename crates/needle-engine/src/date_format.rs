//! Dates as text, read and written the ways Elasticsearch names them
//! (`format` in a date field's mapping, a range query, `docvalue_fields`
//! and date aggregations). A format is one or more alternatives joined by
//! `||`: a date is read with the first that reads it, and written with
//! the first. An alternative is
//! - `epoch_millis` or `epoch_second`;
//! - `strict_date_optional_time` (also `date_optional_time`, `iso8601`, and
//!   `…_nanos`): `2024`, `2024-03`, `2024-03-05`, `2024-03-05T10`, `…T10:20`,
//!   `…T10:20:30`, `…T10:20:30.123`, each with an optional zone (`Z`,
//!   `+01:00`, `+0100`, `+01`); written `2024-03-05T10:20:30.123Z`;
//! - one of the other built-in names (`strict_date`, `basic_date`,
//!   `date_hour_minute_second`, …), each a pattern;
//! - a pattern in java.time's letters: `yyyy` (`uuuu`), `yy`, `M`, `MM`,
//!   `MMM`, `MMMM`, `d`, `dd`, `H`, `HH`, `h`, `hh`, `a`, `m`, `mm`, `s`,
//!   `ss`, `S…` (fraction of a second), `E…`, `X…`/`x…`/`Z…` (offsets),
//!   `'quoted text'`, `[optional sections]`, and any other sign as itself.
//!
//! A date read without a zone is in the caller's time zone (UTC unless a
//! `time_zone` says otherwise). Read to round up (the upper end of a range,
//! see `values.rs`), the missing time of day is its last value: `2024-03-05`
//! is `2024-03-05T23:59:59.999`, `…T10` is `…T10:59:59.999`; a missing month or
//! day is the first, as Elasticsearch reads them.

use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use needle_core::{Error, Result};

use crate::zone::Zone;

/// Elasticsearch's format for a date field that names none.
pub const DEFAULT_DATE_FORMAT: &str = "strict_date_optional_time||epoch_millis";

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
const DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// A format: its alternatives, in order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DateFormat {
    spec: String,
    alternatives: Vec<Alternative>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Alternative {
    EpochMillis,
    EpochSecond,
    Iso,
    Pattern(Vec<Item>),
}

/// One piece of a pattern; numbers carry their letter count.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Item {
    Year(usize),
    Month(usize),
    Day(usize),
    Hour(usize),
    Hour12(usize),
    AmPm,
    Minute(usize),
    Second(usize),
    Fraction(usize),
    DayName(usize),
    /// `X` letters write `Z` for a zero offset; `x` and `Z` never do.
    Offset {
        letters: usize,
        zulu: bool,
        colon: bool,
    },
    Literal(String),
    Optional(Vec<Item>),
}

impl DateFormat {
    /// Reads a format's text; a name or pattern letter Needle does not know is an error naming it.
    pub fn new(spec: &str) -> Result<DateFormat> {
        let alternatives =
            spec.split("||").map(|one| alternative(spec, one.trim())).collect::<Result<_>>()?;
        Ok(DateFormat { spec: spec.to_string(), alternatives })
    }

    /// `strict_date_optional_time||epoch_millis`.
    pub fn default_format() -> DateFormat {
        static READ: std::sync::OnceLock<DateFormat> = std::sync::OnceLock::new();
        READ.get_or_init(|| DateFormat::new(DEFAULT_DATE_FORMAT).expect("the default format reads")).clone()
    }

    /// The format's text, as given.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The milliseconds since 1970 of `text`, read with the first
    /// alternative that reads all of it; a date without a zone is in `zone`.
    pub fn parse(&self, text: &str, zone: Zone, round_up: bool) -> Option<i64> {
        let text = text.trim();
        self.alternatives.iter().find_map(|a| match a {
            Alternative::EpochMillis => epoch(text, 1),
            Alternative::EpochSecond => epoch(text, 1000),
            Alternative::Iso => parse_iso(text, round_up).map(|d| d.instant(zone)),
            Alternative::Pattern(items) => {
                let mut read = Fields::default();
                let rest = read_items(items, text, &mut read)?;
                rest.is_empty().then_some(())?;
                read.resolve(round_up).map(|d| d.instant(zone))
            }
        })
    }

    /// `ms` written with the first alternative, in `zone`.
    pub fn format(&self, ms: i64, zone: Zone) -> String {
        match &self.alternatives[0] {
            Alternative::EpochMillis => ms.to_string(),
            Alternative::EpochSecond => match ms % 1000 {
                0 => (ms / 1000).to_string(),
                _ => format!("{}", ms as f64 / 1000.0),
            },
            Alternative::Iso => zone.format(ms),
            Alternative::Pattern(items) => {
                let offset = zone.offset_ms(ms);
                let Some(local) =
                    chrono::DateTime::from_timestamp_millis(ms.saturating_add(offset)).map(|d| d.naive_utc())
                else {
                    return ms.to_string();
                };
                let mut out = String::new();
                write_items(items, local, offset, &mut out);
                out
            }
        }
    }
}

fn alternative(spec: &str, one: &str) -> Result<Alternative> {
    let named = match one.strip_prefix("strict_").unwrap_or(one) {
        "epoch_millis" => return Ok(Alternative::EpochMillis),
        "epoch_second" => return Ok(Alternative::EpochSecond),
        "date_optional_time" | "date_optional_time_nanos" | "iso8601" => return Ok(Alternative::Iso),
        "date" | "year_month_day" => "yyyy-MM-dd",
        "year_month" => "yyyy-MM",
        "year" => "yyyy",
        "basic_date" => "yyyyMMdd",
        "basic_date_time" => "yyyyMMdd'T'HHmmss.SSSZ",
        "basic_date_time_no_millis" => "yyyyMMdd'T'HHmmssZ",
        "date_time" => "yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
        "date_time_no_millis" => "yyyy-MM-dd'T'HH:mm:ssXXX",
        "date_hour" => "yyyy-MM-dd'T'HH",
        "date_hour_minute" => "yyyy-MM-dd'T'HH:mm",
        "date_hour_minute_second" => "yyyy-MM-dd'T'HH:mm:ss",
        "date_hour_minute_second_millis" | "date_hour_minute_second_fraction" => "yyyy-MM-dd'T'HH:mm:ss.SSS",
        "hour" => "HH",
        "hour_minute" => "HH:mm",
        "hour_minute_second" => "HH:mm:ss",
        "hour_minute_second_millis" | "hour_minute_second_fraction" => "HH:mm:ss.SSS",
        _ => one,
    };
    let bad = |why: String| Error::query(format!("invalid date format [{spec}]: {why}"));
    if one.is_empty() {
        return Err(bad("an empty alternative".into()));
    }
    let mut chars = named.chars().peekable();
    let items = pattern_items(&mut chars, false).map_err(bad)?;
    Ok(Alternative::Pattern(items))
}

/// The items of a pattern up to its end (or, inside `[`, up to the `]`).
fn pattern_items(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    nested: bool,
) -> std::result::Result<Vec<Item>, String> {
    let mut items = Vec::new();
    while let Some(c) = chars.next() {
        if c.is_ascii_alphabetic() {
            let mut count = 1;
            while chars.peek() == Some(&c) {
                chars.next();
                count += 1;
            }
            items.push(letter_item(c, count)?);
            continue;
        }
        match c {
            '\'' => {
                let mut text = String::new();
                loop {
                    match chars.next() {
                        Some('\'') if chars.peek() == Some(&'\'') => {
                            chars.next();
                            text.push('\'');
                        }
                        Some('\'') => break,
                        Some(other) => text.push(other),
                        None => return Err("a quote is not closed".into()),
                    }
                }
                // `''` alone is one quote.
                items.push(Item::Literal(if text.is_empty() { "'".into() } else { text }));
            }
            '[' => items.push(Item::Optional(pattern_items(chars, true)?)),
            ']' if nested => return Ok(items),
            ']' => return Err("a `]` without its `[`".into()),
            other => items.push(Item::Literal(other.to_string())),
        }
    }
    match nested {
        true => Err("a `[` is not closed".into()),
        false => Ok(items),
    }
}

fn letter_item(c: char, count: usize) -> std::result::Result<Item, String> {
    Ok(match c {
        'y' | 'u' => Item::Year(count),
        'M' | 'L' => Item::Month(count),
        'd' => Item::Day(count),
        'H' => Item::Hour(count),
        'h' => Item::Hour12(count),
        'a' => Item::AmPm,
        'm' => Item::Minute(count),
        's' => Item::Second(count),
        'S' => Item::Fraction(count),
        'E' => Item::DayName(count),
        'X' => Item::Offset { letters: count, zulu: true, colon: count >= 3 },
        'x' => Item::Offset { letters: count, zulu: false, colon: count >= 3 },
        'Z' if count <= 3 => Item::Offset { letters: 2, zulu: false, colon: false },
        'Z' if count == 5 => Item::Offset { letters: 3, zulu: true, colon: true },
        other => {
            return Err(format!(
                "the pattern letter [{}] is not supported yet by Needle",
                other.to_string().repeat(count)
            ))
        }
    })
}

/// A `epoch_millis` (`unit` 1) or `epoch_second` (`unit` 1000) text: an
/// integer, or a number with a fraction of the unit.
fn epoch(text: &str, unit: i64) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    match text.parse::<i64>() {
        Ok(n) => n.checked_mul(unit),
        Err(_) => {
            text.parse::<f64>().ok().filter(|f| f.is_finite()).map(|f| (f * unit as f64).floor() as i64)
        }
    }
}

/// A date as read: its wall-clock time, and its offset when it gave one.
pub(crate) struct ReadDate {
    local: NaiveDateTime,
    offset_ms: Option<i64>,
}

impl ReadDate {
    fn instant(&self, zone: Zone) -> i64 {
        let local = self.local.and_utc().timestamp_millis();
        match self.offset_ms {
            Some(offset) => local - offset,
            None => zone.utc(local),
        }
    }
}

/// The fields a pattern read.
#[derive(Default)]
struct Fields {
    year: Option<i32>,
    month: Option<u32>,
    day: Option<u32>,
    hour: Option<u32>,
    hour12: Option<u32>,
    pm: Option<bool>,
    minute: Option<u32>,
    second: Option<u32>,
    nanos: Option<u32>,
    offset_ms: Option<i64>,
}

impl Fields {
    fn resolve(self, round_up: bool) -> Option<ReadDate> {
        let date = NaiveDate::from_ymd_opt(
            self.year.unwrap_or(1970),
            self.month.unwrap_or(1),
            self.day.unwrap_or(1),
        )?;
        let hour = match (self.hour, self.hour12, self.pm) {
            (Some(h), _, _) => Some(h),
            (None, Some(h), pm) if (1..=12).contains(&h) => {
                Some(h % 12 + if pm == Some(true) { 12 } else { 0 })
            }
            (None, Some(_), _) => return None,
            (None, None, _) => None,
        };
        let unit = match (hour, self.minute, self.second, self.nanos) {
            (None, ..) => Unit::Day,
            (Some(_), None, ..) => Unit::Hour,
            (_, Some(_), None, _) => Unit::Minute,
            (_, _, Some(_), None) => Unit::Second,
            _ => Unit::Milli,
        };
        let time = NaiveTime::from_hms_nano_opt(
            hour.unwrap_or(0),
            self.minute.unwrap_or(0),
            self.second.unwrap_or(0),
            self.nanos.unwrap_or(0),
        )?;
        let start = NaiveDateTime::new(date, time);
        let local = if round_up { unit.end(start)? } else { start };
        Some(ReadDate { local, offset_ms: self.offset_ms })
    }
}

/// Reads `items` from the start of `text`; what is left, or `None` when they do not match.
fn read_items<'t>(items: &[Item], mut text: &'t str, read: &mut Fields) -> Option<&'t str> {
    for (i, item) in items.iter().enumerate() {
        // A number right before another number takes its fixed width (`yyyyMMdd`).
        let next_is_number = items.get(i + 1).is_some_and(Item::is_number);
        text = match item {
            Item::Literal(l) => text.strip_prefix(l.as_str())?,
            Item::Optional(inner) => {
                let mut tried = Fields::default();
                match read_items(inner, text, &mut tried) {
                    Some(rest) => {
                        read.merge(tried);
                        rest
                    }
                    None => text,
                }
            }
            Item::Year(n) => {
                let (value, rest) = number(text, year_width(*n, next_is_number))?;
                read.year = Some(match n {
                    2 => 2000 + value as i32,
                    _ => value as i32,
                });
                rest
            }
            Item::Month(n) if *n >= 3 => {
                let (month, rest) = name(text, &MONTHS, *n == 3)?;
                read.month = Some(month as u32 + 1);
                rest
            }
            Item::DayName(n) => name(text, &DAYS, *n <= 3)?.1,
            Item::AmPm => {
                let (pm, rest) = match text.get(..2).map(str::to_ascii_uppercase).as_deref() {
                    Some("AM") => (false, &text[2..]),
                    Some("PM") => (true, &text[2..]),
                    _ => return None,
                };
                read.pm = Some(pm);
                rest
            }
            Item::Fraction(n) => {
                let (value, rest) = number(text, (*n, *n))?;
                read.nanos = Some(value as u32 * 10u32.pow(9 - (*n).min(9) as u32));
                rest
            }
            Item::Offset { .. } => {
                let (offset, rest) = read_offset(text)?;
                read.offset_ms = Some(offset);
                rest
            }
            Item::Month(n)
            | Item::Day(n)
            | Item::Hour(n)
            | Item::Hour12(n)
            | Item::Minute(n)
            | Item::Second(n) => {
                let width = if *n >= 2 || next_is_number { (2, 2) } else { (1, 2) };
                let (value, rest) = number(text, width)?;
                let value = value as u32;
                match item {
                    Item::Month(_) => read.month = Some(value),
                    Item::Day(_) => read.day = Some(value),
                    Item::Hour(_) => read.hour = Some(value),
                    Item::Hour12(_) => read.hour12 = Some(value),
                    Item::Minute(_) => read.minute = Some(value),
                    _ => read.second = Some(value),
                }
                rest
            }
        };
    }
    Some(text)
}

impl Fields {
    fn merge(&mut self, other: Fields) {
        self.year = other.year.or(self.year);
        self.month = other.month.or(self.month);
        self.day = other.day.or(self.day);
        self.hour = other.hour.or(self.hour);
        self.hour12 = other.hour12.or(self.hour12);
        self.pm = other.pm.or(self.pm);
        self.minute = other.minute.or(self.minute);
        self.second = other.second.or(self.second);
        self.nanos = other.nanos.or(self.nanos);
        self.offset_ms = other.offset_ms.or(self.offset_ms);
    }
}

impl Item {
    fn is_number(&self) -> bool {
        matches!(
            self,
            Item::Year(_)
                | Item::Day(_)
                | Item::Hour(_)
                | Item::Hour12(_)
                | Item::Minute(_)
                | Item::Second(_)
                | Item::Fraction(_)
        ) || matches!(self, Item::Month(n) if *n < 3)
    }
}

/// How many digits a year of `letters` letters takes: `yy` two, else at
/// least four (exactly four before another number).
fn year_width(letters: usize, next_is_number: bool) -> (usize, usize) {
    match (letters, next_is_number) {
        (2, _) => (2, 2),
        (_, true) => (4.max(letters), 4.max(letters)),
        _ => (letters.max(1), 9),
    }
}

/// Between `min` and `max` ASCII digits at the start of `text`, as many as there are.
fn number(text: &str, (min, max): (usize, usize)) -> Option<(u64, &str)> {
    let len = text.bytes().take(max).take_while(u8::is_ascii_digit).count();
    (len >= min).then(|| Some((text[..len].parse().ok()?, &text[len..])))?
}

/// A month or day name (or its three-letter form) at the start of `text`: its index.
fn name<'t>(text: &'t str, names: &[&str], short: bool) -> Option<(usize, &'t str)> {
    names.iter().enumerate().find_map(|(i, n)| {
        let n = if short { &n[..3] } else { n };
        let head = text.get(..n.len())?;
        head.eq_ignore_ascii_case(n).then(|| (i, &text[n.len()..]))
    })
}

/// `Z`, `+01`, `+0100` or `+01:00` at the start of `text`, in milliseconds east of UTC.
fn read_offset(text: &str) -> Option<(i64, &str)> {
    if let Some(rest) = text.strip_prefix('Z') {
        return Some((0, rest));
    }
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let (hours, mut rest) = number(&text[1..], (2, 2))?;
    let mut minutes = 0;
    let after_colon = rest.strip_prefix(':');
    if let Some((m, r)) = number(after_colon.unwrap_or(rest), (2, 2)) {
        (minutes, rest) = (m, r);
    } else if after_colon.is_some() {
        return None;
    }
    (hours <= 18 && minutes < 60).then_some((sign * ((hours * 60 + minutes) as i64) * 60_000, rest))
}

fn write_items(items: &[Item], at: NaiveDateTime, offset_ms: i64, out: &mut String) {
    use std::fmt::Write;
    for item in items {
        let _ = match *item {
            Item::Literal(ref l) => write!(out, "{l}"),
            Item::Optional(ref inner) => {
                write_items(inner, at, offset_ms, out);
                Ok(())
            }
            Item::Year(2) => write!(out, "{:02}", at.year().rem_euclid(100)),
            Item::Year(n) => write!(out, "{:0n$}", at.year()),
            Item::Month(n) if n >= 4 => write!(out, "{}", MONTHS[at.month0() as usize]),
            Item::Month(3) => write!(out, "{}", &MONTHS[at.month0() as usize][..3]),
            Item::Month(n) => write!(out, "{:0n$}", at.month()),
            Item::Day(n) => write!(out, "{:0n$}", at.day()),
            Item::Hour(n) => write!(out, "{:0n$}", at.hour()),
            Item::Hour12(n) => write!(out, "{:0n$}", (at.hour() + 11) % 12 + 1),
            Item::AmPm => write!(out, "{}", if at.hour() < 12 { "AM" } else { "PM" }),
            Item::Minute(n) => write!(out, "{:0n$}", at.minute()),
            Item::Second(n) => write!(out, "{:0n$}", at.second()),
            Item::Fraction(n) => {
                let nanos = format!("{:09}", at.nanosecond() % 1_000_000_000);
                write!(out, "{}", &format!("{nanos:0<n$}")[..n])
            }
            Item::DayName(n) => {
                let day = DAYS[at.weekday().num_days_from_monday() as usize];
                write!(out, "{}", if n <= 3 { &day[..3] } else { day })
            }
            Item::Offset { letters, zulu, colon } => write_offset(out, offset_ms, letters, zulu, colon),
        };
    }
}

fn write_offset(
    out: &mut String,
    offset_ms: i64,
    letters: usize,
    zulu: bool,
    colon: bool,
) -> std::fmt::Result {
    use std::fmt::Write;
    if offset_ms == 0 && zulu {
        return write!(out, "Z");
    }
    let minutes = offset_ms.abs() / 60_000;
    let sign = if offset_ms < 0 { '-' } else { '+' };
    match (letters, colon) {
        (1, _) if minutes % 60 == 0 => write!(out, "{sign}{:02}!", minutes / 60),
        (_, true) => write!(out, "{sign}{:02}:{:02}", minutes / 60, minutes % 60),
        _ => write!(out, "{sign}{:02}{:02}!", minutes / 60, minutes % 60),
    }
}

/// The milliseconds since 1970 of a date in the default format
/// (`strict_date_optional_time||epoch_millis`), UTC when it names no zone;
/// with `round_up`, missing parts of the time of day are their last value.
pub fn parse_date(s: &str, round_up: bool) -> Option<i64> {
    let s = s.trim();
    if !s.is_empty() && s.trim_start_matches('-').bytes().all(|b| b.is_ascii_digit()) && s.len() > 4 {
        return s.parse().ok();
    }
    parse_iso(s, round_up).map(|d| d.instant(Zone::UTC))
}

/// An ISO-8601 date as `strict_date_optional_time` reads it (module docs).
fn parse_iso(s: &str, round_up: bool) -> Option<ReadDate> {
    let (date, rest) = s.split_once('T').map_or((s, None), |(d, t)| (d, Some(t)));
    let mut parts = date.split('-');
    let year: i32 = digits(parts.next()?, 4)?.try_into().ok()?;
    let month = parts.next().map(|m| digits(m, 2)).unwrap_or(Some(1))?;
    let day = parts.next().map(|d| digits(d, 2)).unwrap_or(Some(1))?;
    let mut unit = match (date.matches('-').count(), rest) {
        (_, Some(_)) => Unit::Hour,
        (0..=2, None) => Unit::Day,
        _ => return None,
    };
    let start_date = NaiveDate::from_ymd_opt(year, month as u32, day as u32)?;
    let (mut time, mut offset_ms) = (NaiveTime::MIN, None);
    if let Some(rest) = rest {
        let zone_at = rest.find(['Z', '+', '-']).unwrap_or(rest.len());
        let (clock, zone) = rest.split_at(zone_at);
        if !zone.is_empty() {
            let (offset, left) = read_offset(zone)?;
            left.is_empty().then_some(())?;
            offset_ms = Some(offset);
        }
        let (hms, fraction) = clock.split_once('.').map_or((clock, None), |(a, b)| (a, Some(b)));
        let mut fields = hms.split(':');
        let hour = digits(fields.next()?, 2)?;
        let minute = match fields.next() {
            Some(m) => Some(digits(m, 2)?),
            None => None,
        };
        let second = match fields.next() {
            Some(s) => Some(digits(s, 2)?),
            None => None,
        };
        if fields.next().is_some() || (fraction.is_some() && second.is_none()) {
            return None;
        }
        let nanos = match fraction {
            Some(f) if !f.is_empty() && f.len() <= 9 => digits(f, f.len())? * 10u64.pow(9 - f.len() as u32),
            Some(_) => return None,
            None => 0,
        };
        unit = match (minute, second, fraction) {
            (None, _, _) => Unit::Hour,
            (Some(_), None, _) => Unit::Minute,
            (_, Some(_), None) => Unit::Second,
            _ => Unit::Milli,
        };
        time = NaiveTime::from_hms_nano_opt(
            hour as u32,
            minute.unwrap_or(0) as u32,
            second.unwrap_or(0) as u32,
            nanos as u32,
        )?;
    }
    let start = NaiveDateTime::new(start_date, time);
    let local = if round_up { unit.end(start)? } else { start };
    Some(ReadDate { local, offset_ms })
}

/// A run of exactly `len` ASCII digits.
fn digits(s: &str, len: usize) -> Option<u64> {
    (s.len() == len && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

/// The finest part of the time of day a date was written to.
#[derive(Clone, Copy)]
enum Unit {
    Day,
    Hour,
    Minute,
    Second,
    Milli,
}

impl Unit {
    /// `start` with the time of day it leaves out at its last value:
    /// Elasticsearch fills missing hours, minutes, seconds and milliseconds
    /// so, but not missing months or days (those are the first).
    fn end(self, start: NaiveDateTime) -> Option<NaiveDateTime> {
        let next = match self {
            Unit::Day => start + Duration::days(1),
            Unit::Hour => start + Duration::hours(1),
            Unit::Minute => start + Duration::minutes(1),
            Unit::Second => start + Duration::seconds(1),
            Unit::Milli => return Some(start),
        };
        Some(next - Duration::milliseconds(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> i64 {
        parse_date(s, false).unwrap()
    }

    #[test]
    fn the_default_format_reads_as_elasticsearch_reads() {
        // Milliseconds as Elasticsearch 8 / OpenSearch index these strings.
        let cases = [
            ("2024-03-05", 1_709_596_800_000),
            ("2024-03-05T10:20:30Z", 1_709_634_030_000),
            ("2024-03-05T10:20:30.123+01:00", 1_709_630_430_123),
            ("2024-03-05T10:20", 1_709_634_000_000),
            ("2024", 1_704_067_200_000),
            ("1790-01-08", -5_679_590_400_000),
            ("1709596800000", 1_709_596_800_000),
        ];
        let default = DateFormat::default_format();
        for (s, want) in cases {
            assert_eq!(parse_date(s, false), Some(want), "{s}");
            assert_eq!(default.parse(s, Zone::UTC, false), Some(want), "{s}");
        }
        assert_eq!(parse_date("2024-03-05", true), Some(1_709_596_800_000 + 86_400_000 - 1));
        assert_eq!(parse_date("2024-12", true), parse_date("2024-12-01T23:59:59.999Z", false));
        assert_eq!(parse_date("2024-03-05T10:20", true), parse_date("2024-03-05T10:20:59.999", false));
        for bad in
            ["2024-13-01", "2024-02-30", "yesterday", "2024-03-05T25:00", "2024-3-5", "", "2024-03-05T10+1"]
        {
            assert_eq!(parse_date(bad, false), None, "{bad}");
        }
    }

    #[test]
    fn patterns_read_and_write_the_fields_they_name() {
        let f = DateFormat::new("dd/MM/yyyy HH:mm:ss").unwrap();
        assert_eq!(f.parse("05/03/2024 10:20:30", Zone::UTC, false), Some(utc("2024-03-05T10:20:30Z")));
        assert_eq!(f.format(utc("2024-03-05T10:20:30.456Z"), Zone::UTC), "05/03/2024 10:20:30");
        let paris = Zone::parse("Europe/Paris").unwrap();
        assert_eq!(f.parse("05/03/2024 10:20:30", paris, false), Some(utc("2024-03-05T09:20:30Z")));
        assert_eq!(f.format(utc("2024-07-05T10:20:30Z"), paris), "05/07/2024 12:20:30");
        for bad in ["5/3/2024 10:20:30", "05/03/2024 10:20", "05/03/2024 10:20:30x", "31/02/2024 00:00:00"] {
            assert_eq!(f.parse(bad, Zone::UTC, false), None, "{bad}");
        }
        let basic = DateFormat::new("basic_date").unwrap();
        assert_eq!(basic.parse("20240305", Zone::UTC, true), Some(utc("2024-03-05T23:59:59.999Z")));
        assert_eq!(basic.format(utc("2024-03-05T10:00:00Z"), Zone::UTC), "20240305");
        let full = DateFormat::new("EEE, d MMM yyyy h:mm a XXX").unwrap();
        let at = utc("2024-03-05T22:07:00Z");
        assert_eq!(full.format(at, Zone::Fixed(3600)), "Tue, 5 Mar 2024 11:07 PM +01:00");
        assert_eq!(full.parse("Tue, 5 Mar 2024 11:07 PM +01:00", Zone::UTC, false), Some(at));
        let fraction = DateFormat::new("yyyy-MM-dd'T'HH:mm:ss.SSSSSSX").unwrap();
        assert_eq!(fraction.format(at + 12, Zone::UTC), "2024-03-05T22:07:00.012000Z");
        let optional = DateFormat::new("yyyy-MM-dd[ HH:mm]").unwrap();
        assert_eq!(optional.parse("2024-03-05 10:20", Zone::UTC, false), Some(utc("2024-03-05T10:20:00Z")));
        assert_eq!(optional.parse("2024-03-05", Zone::UTC, true), Some(utc("2024-03-05T23:59:59.999Z")));
    }

    #[test]
    fn alternatives_read_in_turn_and_the_first_writes() {
        let f = DateFormat::new("yyyy-MM-dd||epoch_second").unwrap();
        assert_eq!(f.parse("1709596800", Zone::UTC, false), Some(1_709_596_800_000));
        assert_eq!(f.parse("2024-03-05", Zone::UTC, false), Some(1_709_596_800_000));
        assert_eq!(f.format(1_709_596_800_000, Zone::UTC), "2024-03-05");
        let seconds = DateFormat::new("epoch_second").unwrap();
        assert_eq!(seconds.format(1_500, Zone::UTC), "1.5");
        assert_eq!(seconds.parse("1.5", Zone::UTC, false), Some(1_500));
        let iso = DateFormat::new("strict_date_optional_time").unwrap();
        assert_eq!(iso.parse("1709596800000", Zone::UTC, false), None, "only the default adds epoch_millis");
        assert_eq!(iso.format(0, Zone::UTC), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn unknown_letters_and_broken_patterns_are_named() {
        for (spec, words) in [
            ("yyyy-ww", "[ww]"),
            ("yyyy-MM-dd'T", "quote"),
            ("yyyy[-MM", "not closed"),
            ("a||", "empty"),
            ("Q", "[Q]"),
        ] {
            let err = DateFormat::new(spec).unwrap_err().to_string();
            assert!(err.contains(words) && err.contains(spec), "{spec}: {err}");
        }
    }
}
