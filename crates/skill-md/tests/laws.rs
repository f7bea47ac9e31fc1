//! Laws of the reader, over generated input: it never panics, whatever the
//! bytes (nor does [`skill_md::front_matter`]); and every name a fault
//! suggests is itself valid (SPEC §7.4: "every fix a message suggests is
//! itself valid").

use proptest::prelude::*;
use skill_md::read_skill_md;

/// Characters names are made of: the ones the rules are about (case,
/// hyphens, spaces, underscores, NFKC and Unicode case mappings that change
/// a string's length).
fn name_chars() -> impl Strategy<Value = char> {
    prop::sample::select(vec![
        'a', 'z', 'A', 'Z', '0', '9', '-', '-', '_', ' ', '.', 'é', 'É', 'ß', 'İ', 'K', 'Ａ', 'ǅ',
        'ﬁ', '١', '̀', '!',
    ])
}

fn name() -> impl Strategy<Value = String> {
    prop::collection::vec(name_chars(), 1..80).prop_map(|chars| chars.into_iter().collect())
}

/// The names the faults of `file` suggest (`write 'NAME'`).
fn suggestions(folder: &str, name: &str) -> Vec<String> {
    let text = format!("---\nname: \"{name}\"\ndescription: x\n---\n");
    read_skill_md(folder, text.as_bytes())
        .faults
        .iter()
        .filter_map(|fault| fault.message.split("write '").nth(1))
        .filter_map(|rest| rest.rsplit_once('\'').map(|(name, _)| name.to_owned()))
        .collect()
}

proptest! {
    #[test]
    fn any_bytes_read_without_a_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let mut file = b"---\n".to_vec();
        file.extend(bytes);
        let _ = read_skill_md("a", &file);
        let _ = skill_md::front_matter(&file);
    }

    #[test]
    fn any_text_front_matter_reads_without_a_panic(text in "[ -~\n:\\-\\[\\]{}|>'\"#&*!]{0,300}") {
        let file = format!("---\n{text}\n---\nbody");
        let _ = read_skill_md("a", file.as_bytes());
        let _ = skill_md::front_matter(file.as_bytes());
    }

    #[test]
    fn every_suggested_name_passes_the_name_rules(folder in name(), written in name()) {
        prop_assume!(!folder.trim().is_empty() && !folder.contains('/'));
        for suggested in suggestions(&folder, &written) {
            // Written in a folder of its own name, the suggestion breaks no rule.
            let text = format!("---\nname: \"{suggested}\"\ndescription: x\n---\n");
            let faults = read_skill_md(&suggested, text.as_bytes()).faults;
            prop_assert!(faults.is_empty(), "{written:?} in {folder:?} suggested {suggested:?}: {faults:?}");
        }
    }
}
