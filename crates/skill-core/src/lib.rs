//! The data model of an explainable skill graph.
//!
//! `skill-core` owns what every other layer speaks: the [`Skill`] and its
//! tools, steps and routing (SPEC §2), the [`ReadSkillOffer`] a position
//! grants, the [`GuardView`] a guard reads, and the small rules everyone must
//! answer the same way: [`classify_target`], [`spoken`], the closed
//! [`ResultStatus`] set, [`SurfaceMode`] resolution, and the hosts' tool
//! name rule ([`validate_tool_name`]).
//!
//! It must never do I/O, print, keep global state, or depend on another
//! skillgraph crate: it is the bottom layer, and `cargo xtask fence` holds it
//! to serde, serde_json, thiserror and smallvec.
//!
//! The key design decision: deserializing validates shape only. A skill with
//! an empty `produces` list still loads; saying that it is wrong is the job of
//! the explicit checks in `skill-checkup`, which can name every problem at
//! once instead of stopping at the first.
//!
//! ```
//! use skill_core::{classify_target, Skill, TargetClass};
//!
//! let skills: Vec<Skill> = serde_json::from_str(
//!     r#"[{ "id": "triage" }, { "id": "refunds", "trigger": "rule" }]"#,
//! )?;
//! let hops = ["refunds"];
//! let open: [&str; 0] = [];
//! let class = classify_target(Some("triage"), &skills[1].id, &hops[..], &open[..]);
//! assert_eq!(class, TargetClass::Hop);
//! # Ok::<(), serde_json::Error>(())
//! ```

mod id_hash;
mod map;
mod move_by;
mod number;
mod offer;
mod roles;
mod skill;
mod spelling;
mod spoken;
mod status;
mod surface;
mod target;
mod tool_name;
mod tool_pattern;
mod view;
mod view_input;

pub use id_hash::{BuildIdHasher, IdHashMap, IdHashSet, IdHasher};
pub use map::{Budget, Escalation, Route, SkillMap, Start, StartRule};
pub use move_by::MoveBy;
pub use number::{exact_integer, js_number};
pub use offer::{Menu, MenuCandidate, ReadSkillOffer};
pub use roles::{ANY_ROLE, NoRole, Role, Roles, is_role_name, roles_taken, withheld_ids};
pub use skill::{Flavor, Routing, Skill, Step, ToolDecl, Trigger, Via};
pub use spelling::{did_you_mean, nearest, suggestion};
pub use spoken::{Spoken, spoken};
pub use status::{ResultStatus, UnknownStatus};
pub use surface::{SurfaceMode, activates_by_read, resolve_surface_mode, resolved_surface_mode_of};
pub use target::{IdSet, TargetClass, classify_target};
pub use tool_name::{ToolNameError, ToolNameFault, validate_tool_name};
pub use tool_pattern::{is_tool_pattern, tool_pattern_matches};
pub use view::{GuardView, ToolResult};
pub use view_input::GuardViewInput;
