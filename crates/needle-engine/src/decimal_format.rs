//! Numbers shown in an aggregation's `format` (`#,##0.00`, `0.0%`,
//! `'$'#,##0;('$'#)`), as Elasticsearch shows them: a `java.text.DecimalFormat`
//! pattern with the root locale's symbols: a double's shortest digits,
//! rounded half to even on its exact value. A prefix, a number part of `#`, `0`, `,` and `.`,
//! and a suffix; `%` and `‰` in the affixes multiply by 100 and 1,000;
//! quotes make text literal; `;` gives negative numbers their own affixes
//! (else a `-` before the positive prefix).
//!
//! Scientific notation (`0.###E0`, `##0.##E00`): the number part's digits
//! then `E` and the exponent's minimum digits. The mantissa keeps as many
//! significant digits as the pattern's maximum integer digits plus its
//! maximum fraction digits; more integer digits than the minimum make the
//! exponent a multiple of their count (engineering notation), else the
//! exponent leaves the minimum integer digits before the point. Grouping is
//! ignored. `DecimalFormat` rounds a whole double's tie away from zero there
//! (its digits of a whole number are not marked exact); see
//! `tests/golden/java/` for the recorded answers these follow.

use needle_core::{Error, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct DecimalFormat {
    positive: (String, String),
    negative: (String, String),
    multiplier: u32,
    min_int: usize,
    min_frac: usize,
    max_frac: usize,
    /// Digits between grouping separators (0: none).
    grouping: usize,
    /// A pattern ending or starting its number at the point shows it always.
    point_always: bool,
    /// Scientific notation: the exponent's minimum digits, the most integer digits.
    exponent: Option<Exponent>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Exponent {
    min_digits: usize,
    max_int: usize,
}

/// A magnitude as `DecimalFormat`'s digit list holds it: `0.DIGITS x
/// 10^point`, without trailing zeros (no digits: zero).
struct Significand {
    digits: Vec<u8>,
    point: i32,
}

/// A pattern's number part, as `DecimalFormat` counts it.
#[derive(Default)]
struct Digits {
    /// `#` before the first `0`, the `0`s, and `#` after them.
    left: usize,
    zeros: usize,
    right: usize,
    /// Digits before the point, when there is one.
    point: Option<usize>,
    /// Digits since the last `,` before the point (`None`: no `,`).
    group: Option<usize>,
}

impl DecimalFormat {
    pub fn new(pattern: &str) -> Result<DecimalFormat> {
        let bad = |why: &str| Error::invalid(format!("{why} in pattern \"{pattern}\""));
        let (positive, negative) = match split_unquoted(pattern, ';') {
            Some((p, n)) => (p, Some(n)),
            None => (pattern, None),
        };
        let (prefix, number, exponent_digits, suffix) = parts(positive).map_err(|why| bad(&why))?;
        let mut d = Digits::default();
        for c in number.chars() {
            match c {
                '#' if d.zeros == 0 => d.left += 1,
                '#' => d.right += 1,
                '0' if d.right > 0 => return Err(bad("Unexpected '0'")),
                '0' => d.zeros += 1,
                ',' if d.point.is_some() => return Err(bad("Grouping separator after the decimal point")),
                ',' => d.group = Some(0),
                '.' if d.point.is_some() => return Err(bad("Multiple decimal separators")),
                '.' => d.point = Some(d.left + d.zeros + d.right),
                _ => unreachable!("the number part holds digits, ',' and '.'"),
            }
            if matches!(c, '#' | '0') && d.point.is_none() {
                d.group = d.group.map(|g| g + 1);
            }
        }
        if d.zeros == 0 && d.left > 0 {
            if let Some(point) = d.point {
                // `#.##` is read as `0.##`, and `.##` as `.0#`, as DecimalFormat reads them.
                let n = point.max(1);
                (d.right, d.left, d.zeros) = (d.left - n, n - 1, 1);
            }
        }
        let total = d.left + d.zeros + d.right;
        let point = d.point.unwrap_or(total);
        let multiplier = match (positive.contains('%'), positive.contains('\u{2030}')) {
            (true, _) => 100,
            (_, true) => 1000,
            _ => 1,
        };
        let negative = match negative {
            Some(n) => {
                let (prefix, _, _, suffix) = parts(n).map_err(|why| bad(&why))?;
                (prefix, suffix)
            }
            None => (format!("-{prefix}"), suffix.clone()),
        };
        let min_int = point - d.left;
        Ok(DecimalFormat {
            positive: (prefix, suffix),
            negative,
            multiplier,
            min_int,
            min_frac: d.point.map_or(0, |p| (d.left + d.zeros).saturating_sub(p)),
            max_frac: d.point.map_or(0, |p| total - p),
            grouping: d.group.unwrap_or(0),
            point_always: d.point.is_some_and(|p| p == 0 || p == total),
            exponent: exponent_digits.map(|min_digits| Exponent { min_digits, max_int: d.left + min_int }),
        })
    }

    /// `x` shown (a negative zero keeps its sign, as DecimalFormat keeps it).
    pub fn format(&self, x: f64) -> String {
        let negative = x.is_sign_negative() && !x.is_nan();
        let (prefix, suffix) = if negative { &self.negative } else { &self.positive };
        let x = x.abs() * f64::from(self.multiplier);
        let number = match x {
            x if x.is_nan() => "NaN".to_string(),
            x if x.is_infinite() => "\u{221e}".to_string(),
            x => match self.exponent {
                Some(e) => self.scientific(&Significand::of_double(x, self.significant(e)), e),
                None => self.digits(&self.rounded(x)),
            },
        };
        format!("{prefix}{number}{suffix}")
    }

    /// `x`'s digits as DecimalFormat takes them: its shortest decimal (a
    /// double's `toString`, zeros past its digits), rounded half to even on
    /// its exact value when it has more fraction digits than shown.
    fn rounded(&self, x: f64) -> String {
        let shortest = format!("{x}");
        let fraction = shortest.split_once('.').map_or(0, |(_, f)| f.len());
        match fraction <= self.max_frac {
            true => shortest,
            false => format!("{x:.*}", self.max_frac),
        }
    }

    /// A whole number shown exactly (a long field's keys and values).
    pub fn format_long(&self, v: i64) -> String {
        let (prefix, suffix) = if v < 0 { &self.negative } else { &self.positive };
        let magnitude = i128::from(v).abs() * i128::from(self.multiplier);
        if let Some(e) = self.exponent {
            let number = self.scientific(&Significand::of_whole(magnitude, self.significant(e)), e);
            return format!("{prefix}{number}{suffix}");
        }
        let mut plain = magnitude.to_string();
        if self.max_frac > 0 {
            plain.push('.');
            plain.extend(std::iter::repeat_n('0', self.max_frac));
        }
        format!("{prefix}{}{suffix}", self.digits(&plain))
    }

    /// The mantissa's significant digits (0: as many as the number has).
    fn significant(&self, e: Exponent) -> usize {
        e.max_int + self.max_frac
    }

    /// A magnitude in scientific notation, laid out as `DecimalFormat` lays it out.
    fn scientific(&self, s: &Significand, e: Exponent) -> String {
        let zero = s.digits.is_empty();
        let (exponent, min_int) = if e.max_int > 1 && e.max_int > self.min_int {
            // Engineering: the exponent a multiple of the integer digits
            // (`/` truncates toward zero, as Java's does).
            let r = e.max_int as i32;
            let exponent = if s.point >= 1 { (s.point - 1) / r * r } else { (s.point - r) / r * r };
            (exponent, 1)
        } else {
            (s.point - self.min_int as i32, self.min_int)
        };
        let int_digits = if zero { min_int as i32 } else { s.point - exponent };
        let min_digits = ((self.min_int + self.min_frac) as i32).max(int_digits);
        let total = (s.digits.len() as i32).max(min_digits);
        let mut out = String::new();
        for i in 0..total {
            if i == int_digits {
                out.push('.');
            }
            out.push(s.digits.get(i as usize).map_or('0', |&d| char::from(b'0' + d)));
        }
        if self.point_always && total == int_digits {
            out.push('.');
        }
        out.push('E');
        let exponent = if zero { 0 } else { exponent };
        if exponent < 0 {
            out.push('-');
        }
        let magnitude = exponent.unsigned_abs().to_string();
        out.extend(std::iter::repeat_n('0', e.min_digits.saturating_sub(magnitude.len())));
        out + &magnitude
    }

    /// A magnitude written in plain digits (`123.4500`), as the pattern
    /// shows it: fraction zeros past the minimum dropped, integer digits
    /// padded to the minimum and grouped.
    fn digits(&self, plain: &str) -> String {
        let (int, frac) = plain.split_once('.').unwrap_or((plain, ""));
        let frac = frac.trim_end_matches('0');
        let frac = format!("{frac:0<width$}", width = self.min_frac);
        let int = int.trim_start_matches('0');
        let int = match (int.is_empty(), self.min_int, frac.is_empty()) {
            // Nothing at all to show: a zero, as DecimalFormat shows it.
            (true, 0, true) => "0".to_string(),
            _ => format!("{int:0>width$}", width = self.min_int),
        };
        let mut out = group(&int, self.grouping);
        if !frac.is_empty() || self.point_always {
            out.push('.');
        }
        out + &frac
    }
}

impl Significand {
    /// `x` (positive, finite) to `max` significant digits (0: all): its
    /// shortest digits, rounded half to even on its exact value, but for a
    /// whole number below 2^63 whose last shortest digit is the `5` of a
    /// tie: `DecimalFormat` rounds that up.
    fn of_double(x: f64, max: usize) -> Significand {
        if x == 0.0 {
            return Significand { digits: Vec::new(), point: 0 };
        }
        let shortest = Significand::parse(&format!("{x:e}"));
        if max == 0 || shortest.digits.len() <= max {
            return shortest;
        }
        let whole_tie =
            x.fract() == 0.0 && x < 9.223_372_036_854_775_808e18 && shortest.digits.len() == max + 1;
        if whole_tie && shortest.digits[max] == 5 {
            return shortest.round(max, true);
        }
        Significand::parse(&format!("{x:.*e}", max - 1))
    }

    /// A whole magnitude to `max` significant digits (0: all), half to even.
    fn of_whole(v: i128, max: usize) -> Significand {
        let text = v.to_string();
        let digits: Vec<u8> = text.bytes().map(|b| b - b'0').collect();
        let all = Significand { point: digits.len() as i32, digits }.trimmed();
        if max == 0 || all.digits.len() <= max {
            return all;
        }
        let (next, rest) = (all.digits[max], &all.digits[max + 1..]);
        let up = next > 5 || (next == 5 && (rest.iter().any(|&d| d > 0) || all.digits[max - 1] % 2 == 1));
        all.round(max, up)
    }

    /// Rust's `{:e}` form (`1.2345e4`).
    fn parse(text: &str) -> Significand {
        let (mantissa, exp) = text.split_once('e').unwrap_or((text, "0"));
        let digits = mantissa.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect();
        Significand { digits, point: exp.parse::<i32>().unwrap_or(0) + 1 }.trimmed()
    }

    /// The first `keep` digits, plus one in the last when `up`.
    fn round(mut self, keep: usize, up: bool) -> Significand {
        self.digits.truncate(keep);
        if up {
            match self.digits.iter().rposition(|&d| d < 9) {
                Some(i) => {
                    self.digits[i] += 1;
                    self.digits.truncate(i + 1);
                }
                None => {
                    self.digits = vec![1];
                    self.point += 1;
                }
            }
        }
        self.trimmed()
    }

    fn trimmed(mut self) -> Significand {
        while self.digits.last() == Some(&0) {
            self.digits.pop();
        }
        self
    }
}

/// `int` with a `,` every `size` digits from the right (none when 0).
fn group(int: &str, size: usize) -> String {
    if size == 0 {
        return int.to_string();
    }
    let mut out = String::with_capacity(int.len() + int.len() / size);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(size) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `s` cut at the first `sep` outside quotes.
fn split_unquoted(s: &str, sep: char) -> Option<(&str, &str)> {
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        match c {
            '\'' => quoted = !quoted,
            c if c == sep && !quoted => return Some((&s[..i], &s[i + c.len_utf8()..])),
            _ => {}
        }
    }
    None
}

/// A one-sign pattern's prefix (unquoted), number part, exponent digits
/// (scientific notation) and suffix (unquoted).
type Parts = (String, String, Option<usize>, String);

fn parts(pattern: &str) -> std::result::Result<Parts, String> {
    let (mut prefix, mut number, mut suffix) = (String::new(), String::new(), String::new());
    let mut exponent = None;
    let mut chars = pattern.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if c == '\'' {
            if chars.peek() == Some(&'\'') {
                chars.next();
                if number.is_empty() { &mut prefix } else { &mut suffix }.push('\'');
            } else {
                quoted = !quoted;
            }
            continue;
        }
        let in_number = !quoted && matches!(c, '#' | '0' | ',' | '.');
        match (in_number, suffix.is_empty()) {
            (true, true) if exponent.is_some() => return Err(format!("Unexpected '{c}' after the exponent")),
            (true, true) => number.push(c),
            (true, false) => return Err(format!("Unexpected '{c}' after the suffix")),
            (false, true) if !quoted && c == 'E' && !number.is_empty() && exponent.is_none() => {
                let mut zeros = 0;
                while chars.next_if_eq(&'0').is_some() {
                    zeros += 1;
                }
                if zeros == 0 {
                    return Err("Malformed exponential pattern".to_string());
                }
                exponent = Some(zeros);
            }
            (false, _) if number.is_empty() => prefix.push(c),
            (false, _) => suffix.push(c),
        }
    }
    if quoted {
        return Err("Unterminated quote".to_string());
    }
    Ok((prefix, number, exponent, suffix))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(pattern: &str, x: f64) -> String {
        DecimalFormat::new(pattern).unwrap().format(x)
    }

    /// Each as OpenSearch 3.8 showed it.
    #[test]
    fn patterns_show_numbers_as_decimal_format_does() {
        assert_eq!(shown("#,##0.00", -2.5), "-2.50");
        assert_eq!(shown("#,##0.00", 1_235_527.0), "1,235,527.00");
        assert_eq!(shown("0.0", 246.52956), "246.5");
        assert_eq!(shown("#.##", 1234.5678), "1234.57");
        assert_eq!(shown("#.##", -2.5), "-2.5");
        assert_eq!(shown("#.#", 0.125), "0.1");
        assert_eq!(shown("#.#", 0.005), "0");
        assert_eq!(shown("#.#", 0.45), "0.5");
        assert_eq!(shown(".##", 0.45), ".45");
        assert_eq!(shown("#", -2.5), "-2");
        assert_eq!(shown("#,#", 0.45), "0");
        assert_eq!(shown("#%", 1234.5678), "123457%");
        assert_eq!(shown("'$'#,##0.00;('$'#,##0.00)", -2.5), "($2.50)");
        assert_eq!(shown("00.0 units", 247_105.4), "247105.4 units");
        assert_eq!(shown("abc", -2.5), "-abc2");
        let longs = DecimalFormat::new("0000").unwrap();
        assert_eq!(longs.format_long(-42), "-0042");
        assert_eq!(longs.format_long(1_234_567), "1234567");
        assert_eq!(DecimalFormat::new("#,###").unwrap().format(1000.0), "1,000");
        // A huge double's shortest digits, then zeros (not its exact binary expansion).
        assert_eq!(shown("0.###", 1e300), format!("1{}", "0".repeat(300)));
    }

    /// Every answer java.text.DecimalFormat gave (tests/golden/java/, recorded
    /// with the root locale's symbols, as OpenSearch formats).
    #[test]
    fn scientific_patterns_show_numbers_as_java_does() {
        let golden = include_str!("../../../tests/golden/java/decimal_format_scientific.tsv");
        let mut wrong = Vec::new();
        for line in golden.lines() {
            let [pattern, kind, value, want] = line.split('\t').collect::<Vec<_>>()[..] else {
                panic!("bad golden line {line:?}")
            };
            let f = DecimalFormat::new(pattern).unwrap();
            let got = match kind {
                "d" => f.format(value.parse().unwrap()),
                _ => f.format_long(value.parse().unwrap()),
            };
            if got != want {
                wrong.push(format!("{pattern} {kind} {value}: {got}, Java {want}"));
            }
        }
        assert!(
            wrong.is_empty(),
            "{} of {} differ:\n{}",
            wrong.len(),
            golden.lines().count(),
            wrong.join("\n")
        );
    }

    #[test]
    fn bad_patterns_are_refused_naming_the_fault() {
        let err = |p: &str| DecimalFormat::new(p).unwrap_err().to_string();
        assert!(err("#.#.#").contains("Multiple decimal separators in pattern \"#.#.#\""));
        assert!(err("0.#0").contains("Unexpected '0'"));
        assert!(err("0.###E").contains("Malformed exponential pattern"));
        assert!(err("0.#E0#").contains("Unexpected '#' after the exponent"));
        assert!(err("'$#").contains("Unterminated quote"));
    }
}
