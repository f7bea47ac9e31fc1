//! The offer view, its rendering and the read_skill tool from arbitrary
//! skills and offers (`{ "skills": […], "offer": {…}, "id": "…" }`). Nothing
//! may panic, and no hidden id may be named in the description.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_core::{ReadSkillOffer, Skill};
use skill_tools::{offer_view, read_skill, list_skills};

#[derive(serde::Deserialize)]
struct Input {
    skills: Vec<Skill>,
    offer: Option<ReadSkillOffer>,
    id: Option<String>,
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Input>(data) else { return };
    let view = offer_view(&input.skills, input.offer.as_ref());
    let _ = view.render();
    let _ = serde_json::to_string(&view);
    if let Some(offer) = &input.offer {
        for hidden in &offer.hidden_ids {
            assert!(view.cursor != Some(hidden.as_str()), "hidden cursor named");
        }
    }
    if let Some(tool) = read_skill(&input.skills, input.offer.as_ref()) {
        let _ = tool.execute.call(&serde_json::json!({ "id": input.id.unwrap_or_default() }));
    }
    if let Some(tool) = list_skills(&input.skills) {
        let _ = tool.execute.call(&serde_json::Value::Null);
    }
});
