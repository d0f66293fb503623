//! Numbers shown in an aggregation's `format` (`#,##0.00`, `0.0%`,
//! `'$'#,##0;('$'#)`), as Elasticsearch shows them: a `java.text.DecimalFormat`
//! pattern with the root locale's symbols: a double's shortest digits,
//! rounded half to even on its exact value. A prefix, a number part of `#`, `0`, `,` and `.`,
//! and a suffix; `%` and `‰` in the affixes multiply by 100 and 1,000;
//! quotes make text literal; `;` gives negative numbers their own affixes
//! (else a `-` before the positive prefix). Scientific notation (`E`) is
//! refused.

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
        let (prefix, number, suffix) = parts(positive).map_err(|why| bad(&why))?;
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
                let (prefix, _, suffix) = parts(n).map_err(|why| bad(&why))?;
                (prefix, suffix)
            }
            None => (format!("-{prefix}"), suffix.clone()),
        };
        Ok(DecimalFormat {
            positive: (prefix, suffix),
            negative,
            multiplier,
            min_int: point - d.left,
            min_frac: d.point.map_or(0, |p| (d.left + d.zeros).saturating_sub(p)),
            max_frac: d.point.map_or(0, |p| total - p),
            grouping: d.group.unwrap_or(0),
            point_always: d.point.is_some_and(|p| p == 0 || p == total),
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
            x => self.digits(&self.rounded(x)),
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
        let mut plain = magnitude.to_string();
        if self.max_frac > 0 {
            plain.push('.');
            plain.extend(std::iter::repeat_n('0', self.max_frac));
        }
        format!("{prefix}{}{suffix}", self.digits(&plain))
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

/// A one-sign pattern's prefix (unquoted), number part and suffix (unquoted).
fn parts(pattern: &str) -> std::result::Result<(String, String, String), String> {
    let (mut prefix, mut number, mut suffix) = (String::new(), String::new(), String::new());
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
            (true, true) => number.push(c),
            (true, false) => return Err(format!("Unexpected '{c}' after the suffix")),
            (false, _) if !quoted && c == 'E' && !number.is_empty() && suffix.is_empty() => {
                return Err("Scientific notation (E) is not supported yet by Needle".to_string())
            }
            (false, _) if number.is_empty() => prefix.push(c),
            (false, _) => suffix.push(c),
        }
    }
    if quoted {
        return Err("Unterminated quote".to_string());
    }
    Ok((prefix, number, suffix))
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

    #[test]
    fn bad_patterns_are_refused_naming_the_fault() {
        let err = |p: &str| DecimalFormat::new(p).unwrap_err().to_string();
        assert!(err("#.#.#").contains("Multiple decimal separators in pattern \"#.#.#\""));
        assert!(err("0.#0").contains("Unexpected '0'"));
        assert!(err("0.###E0").contains("Scientific notation"));
        assert!(err("'$#").contains("Unterminated quote"));
    }
}
