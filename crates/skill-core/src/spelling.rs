//! Spelling suggestions: the known name a misspelt one most likely meant,
//! and the one way every message says it: ` (did you mean "surface_mode"?)`.

/// The words every message adds for a suggestion: ` (did you mean "X"?)`,
/// or nothing when there is none.
///
/// ```
/// use skill_core::suggestion;
///
/// assert_eq!(suggestion(Some("gte")), r#" (did you mean "gte"?)"#);
/// assert_eq!(suggestion(None), "");
/// ```
pub fn suggestion(nearest: Option<&str>) -> String {
    match nearest {
        Some(name) => format!(" (did you mean \"{name}\"?)"),
        None => String::new(),
    }
}

/// [`suggestion`] for the [`nearest`] name in `known` to `written`.
///
/// ```
/// use skill_core::did_you_mean;
///
/// assert_eq!(did_you_mean("biling", ["billing", "faq"]), r#" (did you mean "billing"?)"#);
/// assert_eq!(did_you_mean("colour", ["billing", "faq"]), "");
/// ```
pub fn did_you_mean<'k>(written: &str, known: impl IntoIterator<Item = &'k str>) -> String {
    suggestion(nearest(written, known))
}

/// The name in `known` closest to `written`, when it is close enough to be a
/// likely misspelling: the same letters and digits ignoring case and
/// separators (`surfaceMode` → `surface_mode`), or failing that the fewest
/// edits, at most a third of the name's length (and at least one).
///
/// ```
/// use skill_core::nearest;
///
/// assert_eq!(nearest("surfaceMode", ["surface_mode", "steps"]), Some("surface_mode"));
/// assert_eq!(nearest("gle", ["eq", "gte", "lte"]), Some("gte"));
/// assert_eq!(nearest("colour", ["surface_mode", "steps"]), None);
/// ```
pub fn nearest<'k>(written: &str, known: impl IntoIterator<Item = &'k str>) -> Option<&'k str> {
    let fold = |s: &str| {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let folded = fold(written);
    let mut best: Option<(usize, &'k str)> = None;
    for name in known {
        let candidate = fold(name);
        if candidate == folded {
            return Some(name);
        }
        let distance = edit_distance(&candidate, &folded);
        let close = distance <= (name.chars().count() / 3).max(1);
        if close && best.is_none_or(|(shortest, _)| distance < shortest) {
            best = Some((distance, name));
        }
    }
    best.map(|(_, name)| name)
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_count_characters() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("résumé", "resume"), 2);
    }

    #[test]
    fn the_closest_name_wins() {
        assert_eq!(
            nearest("route", ["entries", "routes", "skills"]),
            Some("routes")
        );
        assert_eq!(
            nearest("llm_activated", ["llm-activated", "rule"]),
            Some("llm-activated")
        );
        assert_eq!(nearest("xyz", ["entries", "routes"]), None);
    }
}
