//! `*` wildcards as Elasticsearch reads them in index names, field names,
//! `_source` filters and `filter_path`: `*` matches any run of characters.

pub fn matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return pattern == name;
    }
    if name.len() < first.len() + last.len() || !name.starts_with(first) || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn wildcards() {
        for (p, n) in
            [("logs", "logs"), ("lo*", "logs"), ("*s", "logs"), ("l*g*", "logs"), ("*", ""), ("a*a", "aa")]
        {
            assert!(matches(p, n), "{p} {n}");
        }
        for (p, n) in [("log", "logs"), ("x*", "logs"), ("a*a", "a"), ("l*x*", "logs")] {
            assert!(!matches(p, n), "{p} {n}");
        }
    }
}
