//! Date math, as Elasticsearch reads it in the bounds of a range query:
//! `now`, or a date and `||`, followed by any number of `+1d`, `-2h`
//! (years `y`, months `M`, weeks `w`, days `d`, hours `h`/`H`, minutes `m`,
//! seconds `s`) and `/d` (rounded to the start of the unit, or to its last
//! millisecond when the bound rounds up: `lte` and `gt`). Years, months,
//! weeks and days move and round in the wall-clock time of the reading's
//! zone; hours, minutes and seconds move the instant itself.

use chrono::{Datelike, Duration, Months, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

use crate::date_format::DateFormat;
use crate::zone::Zone;

/// How the dates of a query are read: their format, the zone of those
/// that name none (and of rounding), and the instant `now` stands for.
#[derive(Debug, Clone)]
pub struct DateReading {
    pub format: DateFormat,
    pub zone: Zone,
    pub now_ms: i64,
}

impl DateReading {
    /// The default format in UTC, `now` being this moment.
    pub fn utc_now() -> DateReading {
        DateReading { format: DateFormat::default_format(), zone: Zone::UTC, now_ms: now_ms() }
    }

    /// The milliseconds since 1970 `text` stands for; `None` when it is not a date.
    pub fn parse(&self, text: &str, round_up: bool) -> Option<i64> {
        let text = text.trim();
        let (anchor, math) = match text.strip_prefix("now") {
            Some(math) => (self.now_ms, math),
            None => match text.split_once("||") {
                Some((date, math)) => (self.format.parse(date, self.zone, round_up)?, math),
                None => return self.format.parse(text, self.zone, round_up),
            },
        };
        // Math on an instant the calendar cannot hold (an extreme epoch) has no answer.
        chrono::DateTime::from_timestamp_millis(anchor)?;
        apply(anchor, math, self.zone, round_up)
    }
}

/// This moment, in milliseconds since 1970.
pub fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    since.as_millis() as i64
}

fn apply(mut at: i64, mut math: &str, zone: Zone, round_up: bool) -> Option<i64> {
    while let Some(op) = math.chars().next() {
        math = &math[1..];
        if op == '/' {
            let unit = math.chars().next()?;
            math = &math[unit.len_utf8()..];
            at = round(at, unit, zone, round_up)?;
            continue;
        }
        let sign = match op {
            '+' => 1,
            '-' => -1,
            _ => return None,
        };
        let digits = math.bytes().take_while(u8::is_ascii_digit).count();
        let n: i64 = if digits == 0 { 1 } else { math[..digits].parse().ok()? };
        math = &math[digits..];
        let unit = math.chars().next()?;
        math = &math[unit.len_utf8()..];
        at = add(at, sign * n, unit, zone)?;
    }
    Some(at)
}

fn add(at: i64, n: i64, unit: char, zone: Zone) -> Option<i64> {
    let exact = |step: i64| at.checked_add(n.checked_mul(step)?);
    match unit {
        'h' | 'H' => exact(3_600_000),
        'm' => exact(60_000),
        's' => exact(1_000),
        'y' | 'M' | 'w' | 'd' => {
            let local = wall_clock(at, zone)?;
            let moved = match unit {
                'y' => shift_months(local, n.checked_mul(12)?)?,
                'M' => shift_months(local, n)?,
                'w' => local.checked_add_signed(Duration::try_weeks(n)?)?,
                _ => local.checked_add_signed(Duration::try_days(n)?)?,
            };
            Some(zone.utc(moved.and_utc().timestamp_millis()))
        }
        _ => None,
    }
}

fn shift_months(local: NaiveDateTime, n: i64) -> Option<NaiveDateTime> {
    let months = Months::new(u32::try_from(n.unsigned_abs()).ok()?);
    if n >= 0 {
        local.checked_add_months(months)
    } else {
        local.checked_sub_months(months)
    }
}

/// `at` rounded down to the start of `unit` in `zone`'s wall-clock time, or
/// (`up`) to the last millisecond before the next one.
fn round(at: i64, unit: char, zone: Zone, up: bool) -> Option<i64> {
    let local = wall_clock(at, zone)?;
    let date = local.date();
    let day = |d: NaiveDate| d.and_time(NaiveTime::MIN);
    let start = match unit {
        'y' => day(NaiveDate::from_ymd_opt(date.year(), 1, 1)?),
        'M' => day(date.with_day(1)?),
        'w' => day(date - Duration::days(i64::from(date.weekday().num_days_from_monday()))),
        'd' => day(date),
        'h' | 'H' => date.and_hms_opt(local.hour(), 0, 0)?,
        'm' => date.and_hms_opt(local.hour(), local.minute(), 0)?,
        's' => local.with_nanosecond(0)?,
        _ => return None,
    };
    let start_ms = zone.utc(start.and_utc().timestamp_millis());
    if !up {
        return Some(start_ms);
    }
    let next = add(start_ms, 1, unit, zone)?;
    Some(next - 1)
}

fn wall_clock(at: i64, zone: Zone) -> Option<NaiveDateTime> {
    chrono::DateTime::from_timestamp_millis(zone.local(at)).map(|d| d.naive_utc())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date_format::parse_date;

    fn utc(s: &str) -> i64 {
        parse_date(s, false).unwrap()
    }

    fn reading(zone: Zone) -> DateReading {
        DateReading { format: DateFormat::default_format(), zone, now_ms: utc("2024-03-05T10:20:30.456Z") }
    }

    #[test]
    fn now_and_anchored_dates_move_and_round() {
        let r = reading(Zone::UTC);
        let cases = [
            ("now", false, "2024-03-05T10:20:30.456Z"),
            ("now-1d", false, "2024-03-04T10:20:30.456Z"),
            ("now+2h", false, "2024-03-05T12:20:30.456Z"),
            ("now/d", false, "2024-03-05T00:00:00.000Z"),
            ("now/d", true, "2024-03-05T23:59:59.999Z"),
            ("now-1M/M", false, "2024-02-01T00:00:00.000Z"),
            ("now-1M/M", true, "2024-02-29T23:59:59.999Z"),
            ("now/w", false, "2024-03-04T00:00:00.000Z"),
            ("now/y", true, "2024-12-31T23:59:59.999Z"),
            ("now/h", false, "2024-03-05T10:00:00.000Z"),
            ("now-90m/m", false, "2024-03-05T08:50:00.000Z"),
            ("2024-01-31||+1M", false, "2024-02-29T00:00:00.000Z"),
            ("2024-01-31||+1M", true, "2024-02-29T23:59:59.999Z"),
            ("2024-03-05T10:00:00Z||-1y/d", false, "2023-03-05T00:00:00.000Z"),
        ];
        for (text, up, want) in cases {
            assert_eq!(r.parse(text, up), Some(utc(want)), "{text} (up: {up})");
        }
        let extreme = DateReading { zone: Zone::Fixed(3600), ..reading(Zone::UTC) };
        assert_eq!(extreme.parse("9223372036854775807||+1d", false), None, "no overflow, no answer");
        assert_eq!(
            DateFormat::new("yyyy").unwrap().format(i64::MAX, Zone::Fixed(3600)),
            i64::MAX.to_string()
        );
        for bad in ["now-", "now-1", "now/x", "now+1q", "2024-03-05||*1d", "nowish"] {
            assert_eq!(r.parse(bad, false), None, "{bad}");
        }
    }

    #[test]
    fn days_round_in_the_zone_and_hours_move_the_instant() {
        let paris = reading(Zone::parse("Europe/Paris").unwrap());
        assert_eq!(paris.parse("now/d", false), Some(utc("2024-03-04T23:00:00Z")));
        assert_eq!(paris.parse("2024-03-05", false), Some(utc("2024-03-04T23:00:00Z")));
        // Across the change to summer time (2024-03-31): a day later is the same wall-clock hour.
        assert_eq!(paris.parse("2024-03-30T12:00||+1d", false), Some(utc("2024-03-31T10:00:00Z")));
        assert_eq!(paris.parse("2024-03-30T12:00||+24h", false), Some(utc("2024-03-31T11:00:00Z")));
    }
}
