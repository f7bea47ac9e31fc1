//! `list_skills`: a no-argument tool whose result is the catalog, ids and
//! descriptions, as JSON. Known gap, kept from the reference on purpose: it
//! is neither role-filtered nor cursor-scoped.

use serde::Serialize;
use serde_json::{Value, json};
use skill_core::Skill;

use crate::descriptor::{Execute, InputError, ToolDescriptor, arguments};
use crate::lens::NO_DESCRIPTION;

/// The tool's name.
pub const LIST_SKILLS: &str = "list_skills";

/// One catalog entry as `list_skills` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Entry {
    id: String,
    description: String,
}

/// The catalog a `list_skills` call answers with, as of the descriptor's
/// building.
#[derive(Debug, Clone, PartialEq)]
pub struct ListSkillsCall {
    answer: String,
}

impl ListSkillsCall {
    /// The answer: `[{ "id", "description" }]` as pretty JSON.
    pub fn answer(&self) -> &str {
        &self.answer
    }

    pub(crate) fn call(&self, input: &Value) -> Result<String, InputError> {
        arguments(LIST_SKILLS, input, &[], "{}")?;
        Ok(self.answer.clone())
    }
}

/// The `list_skills` descriptor for `skills`; `None` when there are none.
///
/// ```
/// use serde_json::json;
/// use skill_core::Skill;
/// use skill_tools::list_skills;
///
/// let tool = list_skills(&[Skill::new("triage")]).expect("a skill exists");
/// let answer: serde_json::Value = serde_json::from_str(&tool.execute.call(&json!({}))?).expect("JSON");
/// assert_eq!(answer[0]["id"], "triage");
/// # Ok::<(), skill_tools::InputError>(())
/// ```
pub fn list_skills(skills: &[Skill]) -> Option<ToolDescriptor> {
    if skills.is_empty() {
        return None;
    }
    let catalog: Vec<Entry> = skills
        .iter()
        .map(|s| Entry {
            id: s.id.clone(),
            description: s
                .description
                .clone()
                .unwrap_or_else(|| NO_DESCRIPTION.to_owned()),
        })
        .collect();
    // Serializing plain strings into JSON cannot fail.
    let answer = serde_json::to_string_pretty(&catalog).unwrap_or_default();
    Some(ToolDescriptor {
        name: LIST_SKILLS.to_owned(),
        description: "Lists this catalog's skills as JSON, each with its id and description. Call it to look a \
                      skill up before calling read_skill."
            .to_owned(),
        input_schema: json!({ "type": "object", "properties": {}, "additionalProperties": false }),
        execute: Execute::ListSkills(ListSkillsCall { answer }),
    })
}
