//! Host-neutral tool descriptors for a skill graph.
//!
//! `skill-tools` owns the tools a skill graph needs the model to have:
//! [`read_skill`] (the cursor door: its enum is the catalog, its description
//! the offer, its answer the body or a confirmation) and [`list_skills`]; the
//! [`OfferView`] that says, as data, what one request's description may name;
//! its rendering under the lens law ([`OfferView::render`]); and the JSON
//! formats hosts speak ([`HostFormat`]: Anthropic, OpenAI chat, MCP).
//!
//! It must never do I/O, print or keep global state, and it depends on
//! `skill-core` alone: it never sees guards or the check-up.
//!
//! The key design decision: the description is composed in two steps, a
//! structured view and then its rendering, so the laws that matter (no hidden
//! id, absence only "from here", a filtered-out set dropped rather than
//! denied) are checked on data, and the wording can change without moving
//! what is said. Sets are classified with hash sets, because the description
//! is recomposed for every request.
//!
//! ```
//! use skill_core::{ReadSkillOffer, Skill};
//! use skill_tools::{list_skills, read_skill, HostFormat};
//!
//! let skills = vec![Skill::new("triage"), Skill::new("refunds")];
//! let offer = ReadSkillOffer {
//!     grantable: Some(vec!["refunds".into()]),
//!     cursor_id: Some("triage".into()),
//!     ..ReadSkillOffer::default()
//! };
//! let tool = read_skill(&skills, Some(&offer)).expect("skills exist");
//! let anthropic = tool.to_host(HostFormat::Anthropic)?;
//! assert_eq!(anthropic["name"], "read_skill");
//! assert!(list_skills(&skills).is_some());
//! # Ok::<(), skill_tools::ToolNameError>(())
//! ```

mod descriptor;
mod host_format;
mod lens;
mod list_skills;
mod offer_view;
mod read_skill;
mod skip_step;

pub use descriptor::{Execute, InputError, ToolDescriptor};
pub use host_format::HostFormat;
pub use lens::{DEFAULT_CATALOG_BUDGET, DESCRIPTION_LIMIT, NO_DESCRIPTION};
pub use list_skills::{LIST_SKILLS, ListSkillsCall, list_skills};
pub use offer_view::{
    MenuRow, OfferMode, OfferView, OwnedMenuRow, OwnedOfferView, OwnedRow, Row, offer_view,
};
pub use read_skill::{
    READ_SKILL, ReadSkillAnswer, ReadSkillCall, activation_confirmation, read_skill, read_skill_id,
    read_skill_within,
};
/// The hosts' tool name rule, kept in `skill-core` so the check-up judges a
/// name as [`ToolDescriptor::to_host`] does.
pub use skill_core::{ToolNameError, ToolNameFault, validate_tool_name};
pub use skip_step::{SKIP_STEP, SkipStepCall, skip_step};
