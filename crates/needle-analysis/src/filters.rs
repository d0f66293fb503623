//! Token filters: lowercasing (Java's per-character mapping, so terms equal
//! Lucene's), stop words and stemming.

/// Lowercases `word` into `out` one character at a time, as Java's
/// `Character.toLowerCase` does: no context-dependent rules (final sigma) and
/// a single character out for every character in.
pub fn lowercase_into(word: &str, out: &mut String) {
    out.clear();
    if word.is_ascii() {
        out.push_str(word);
        out.make_ascii_lowercase();
        return;
    }
    for c in word.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
            continue;
        }
        let mut lower = c.to_lowercase();
        match (lower.next(), lower.next()) {
            (Some(l), None) => out.push(l),
            // Only U+0130 (capital I with dot) lowers to two characters; Java maps it to 'i'.
            _ => out.push(if c == '\u{130}' { 'i' } else { c }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercases_like_java() {
        let mut s = String::new();
        lowercase_into("İstanbul ΣΊΣΥΦΟΣ ABC", &mut s);
        assert_eq!(s, "istanbul σίσυφοσ abc");
    }
}
