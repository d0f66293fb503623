//! Time zones of date histograms (Elasticsearch's `time_zone`): buckets
//! are cut in the zone's wall-clock time (a day is a local day, even across
//! a daylight-saving change) and keyed by the UTC instant they start at.
//! Zones are UTC, fixed offsets (`+05:30`, `-08:00`) or IANA names
//! (`America/New_York`) from the tz database `chrono-tz` carries.

use std::str::FromStr;

use chrono::{DateTime, Datelike, LocalResult, Offset, TimeZone, Timelike};
use chrono_tz::Tz;

const DAY_MS: i64 = 86_400_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    /// Seconds east of UTC (0 for UTC itself).
    Fixed(i32),
    Named(Tz),
}

impl Zone {
    pub const UTC: Zone = Zone::Fixed(0);

    /// `UTC`, `Z`, `GMT`, `+05:30`, `-0800`, `+05`, or an IANA name.
    pub fn parse(text: &str) -> Option<Zone> {
        if matches!(text, "UTC" | "Z" | "GMT" | "utc" | "Etc/UTC") {
            return Some(Zone::UTC);
        }
        if let Some(sign) = text.chars().next().filter(|c| *c == '+' || *c == '-') {
            let digits: String = text[1..].chars().filter(|c| *c != ':').collect();
            if digits.is_empty() || digits.len() > 4 || !digits.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let (hours, minutes) = match digits.len() {
                1 | 2 => (digits.parse::<i32>().ok()?, 0),
                _ => (
                    digits[..digits.len() - 2].parse::<i32>().ok()?,
                    digits[digits.len() - 2..].parse::<i32>().ok()?,
                ),
            };
            if hours > 18 || minutes > 59 {
                return None;
            }
            let seconds = hours * 3600 + minutes * 60;
            return Some(Zone::Fixed(if sign == '-' { -seconds } else { seconds }));
        }
        Tz::from_str(text).ok().map(Zone::Named)
    }

    /// The zone's offset from UTC at the instant `utc_ms`, in milliseconds.
    pub fn offset_ms(self, utc_ms: i64) -> i64 {
        match self {
            Zone::Fixed(seconds) => i64::from(seconds) * 1000,
            Zone::Named(tz) => match DateTime::from_timestamp_millis(utc_ms) {
                Some(utc) => {
                    i64::from(tz.offset_from_utc_datetime(&utc.naive_utc()).fix().local_minus_utc()) * 1000
                }
                None => 0,
            },
        }
    }

    /// The wall-clock time at `utc_ms`, as milliseconds of a UTC-like count.
    pub fn local(self, utc_ms: i64) -> i64 {
        // Saturating: a value near the ends of `i64` (any epoch a user indexed) stays there.
        utc_ms.saturating_add(self.offset_ms(utc_ms))
    }

    /// The instant the wall-clock time `local_ms` happens: the earlier one
    /// when clocks go back, and as if the clock had not moved forward when
    /// it skipped that time (as java.time resolves both).
    pub fn utc(self, local_ms: i64) -> i64 {
        let Zone::Named(tz) = self else { return local_ms.saturating_sub(self.offset_ms(local_ms)) };
        let Some(naive) = DateTime::from_timestamp_millis(local_ms).map(|d| d.naive_utc()) else {
            return local_ms;
        };
        match tz.from_local_datetime(&naive) {
            LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => t.timestamp_millis(),
            // A skipped time: the offset before the change applies.
            LocalResult::None => local_ms.saturating_sub(self.offset_ms(local_ms.saturating_sub(DAY_MS))),
        }
    }

    /// `utc_ms` as Elasticsearch shows a date in this zone: `2020-03-01T00:00:00.000-05:00`.
    pub fn format(self, utc_ms: i64) -> String {
        let offset = self.offset_ms(utc_ms);
        let Some(local) =
            DateTime::from_timestamp_millis(utc_ms.saturating_add(offset)).map(|d| d.naive_utc())
        else {
            return utc_ms.to_string();
        };
        let (date, time) = (local.date(), local.time());
        if !(0..=9999).contains(&date.year()) {
            // chrono's sign and width for years of more than four digits.
            return format!("{}{}", local.format("%Y-%m-%dT%H:%M:%S%.3f"), offset_text(offset));
        }
        // The fields written out directly: a format string read at every call costs a microsecond.
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{}",
            date.year(),
            date.month(),
            date.day(),
            time.hour(),
            time.minute(),
            time.second(),
            time.nanosecond() / 1_000_000 % 1000,
            offset_text(offset)
        )
    }
}

/// `Z`, or `+HH:MM` (seconds of an old local mean time dropped, as Java prints them).
fn offset_text(offset_ms: i64) -> String {
    if offset_ms == 0 {
        return "Z".into();
    }
    let minutes = offset_ms.abs() / 60_000;
    format!("{}{:02}:{:02}", if offset_ms < 0 { '-' } else { '+' }, minutes / 60, minutes % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_chrono_formats() {
        let zones =
            [Zone::UTC, Zone::Fixed(19_800), Zone::Fixed(-28_800), Zone::parse("Europe/Paris").unwrap()];
        let instants = [
            -62_167_219_200_001, // year -1
            -62_135_596_800_000, // year 1
            -1,
            0,
            999,
            1_700_000_000_123,
            253_402_300_799_999, // 9999-12-31T23:59:59.999Z
            253_402_300_800_000, // year 10000
        ];
        for zone in zones {
            for ms in instants.into_iter().chain((0..500).map(|i| i * 7_919_000_003_i64 - 1_000_000_000_000))
            {
                let offset = zone.offset_ms(ms);
                let local = DateTime::from_timestamp_millis(ms + offset).unwrap().naive_utc();
                let want = format!("{}{}", local.format("%Y-%m-%dT%H:%M:%S%.3f"), offset_text(offset));
                assert_eq!(zone.format(ms), want, "{zone:?} {ms}");
            }
        }
    }

    #[test]
    fn parses_offsets_and_names() {
        assert_eq!(Zone::parse("+05:30"), Some(Zone::Fixed(19_800)));
        assert_eq!(Zone::parse("-0800"), Some(Zone::Fixed(-28_800)));
        assert_eq!(Zone::parse("+01"), Some(Zone::Fixed(3_600)));
        assert_eq!(Zone::parse("UTC"), Some(Zone::UTC));
        assert!(matches!(Zone::parse("Europe/Paris"), Some(Zone::Named(_))));
        assert_eq!(Zone::parse("Mars/Olympus"), None);
        assert_eq!(Zone::parse("+25:00"), None);
    }

    #[test]
    fn daylight_saving_changes_resolve_as_java_does() {
        let ny = Zone::parse("America/New_York").unwrap();
        // 2020-03-08: 02:00 EST became 03:00 EDT; 2020-11-01: 02:00 EDT became 01:00 EST.
        let at = |s: &str| {
            chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M").unwrap().and_utc().timestamp_millis()
        };
        assert_eq!(ny.utc(at("2020-03-08T02:30")), at("2020-03-08T07:30"), "a skipped time: the old offset");
        assert_eq!(
            ny.utc(at("2020-11-01T01:30")),
            at("2020-11-01T05:30"),
            "a repeated time: the earlier instant"
        );
        assert_eq!(ny.format(at("2020-07-01T04:00")), "2020-07-01T00:00:00.000-04:00");
        assert_eq!(Zone::UTC.format(0), "1970-01-01T00:00:00.000Z");
    }
}
