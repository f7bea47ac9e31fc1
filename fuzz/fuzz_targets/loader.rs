//! The map loader from arbitrary bytes: as a `skillmap.json` (then checked
//! and routed) and as a `SKILL.md`. Nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_core::{SkillMap, ToolResult};
use skill_guard::{CompiledMap, Iteration};

fuzz_target!(|data: &[u8]| {
    let _ = skillgraph::skill_md::read_skill_md("fuzz-skill", data);
    let Ok(map) = serde_json::from_slice::<SkillMap>(data) else { return };
    let _ = skill_checkup::check_map(&map);
    let _ = skillgraph::skill_explain::mermaid(&map);
    if let (Ok(compiled), Some(skill)) = (CompiledMap::new(&map), map.skills.first()) {
        let results = [ToolResult { tool_name: "t".into(), result: String::from_utf8_lossy(data).into_owned(), status: None }];
        let _ = compiled.resolve(&skill.id, &results, Iteration { number: 1.0, user_message: "m" });
    }
});
