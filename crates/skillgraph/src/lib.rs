//! An explainable skill graph for LLM-agent hosts, in one dependency.
//!
//! `skillgraph` owns two things: the facade, which re-exports every pure
//! layer — [`skill_core`] (the data model and the map), [`skill_guard`]
//! (guards and route resolution), [`skill_checkup`] (the check-up),
//! [`skill_tools`] (tool descriptors), [`skill_session`] (one conversation
//! on one map: the read gate, the call gate, moves and the record),
//! [`skill_md`] (the Agent Skills reader) and [`skill_explain`] (a record
//! explained, a map drawn) — and the loader: [`load`]ing a map from a
//! `skillmap.json` file or from a folder of Agent Skills
//! (`skills/<name>/SKILL.md`), [`prepare`]: one map loaded, checked and
//! compiled for every driver that runs it, and [`RecordWriter`], the record
//! file.
//!
//! It must never parse arguments, choose exit codes, speak MCP or print:
//! the binary (`skillgraph-cli`) and the MCP server library
//! (`skillgraph-mcp`) sit on top of it. It is the only library crate that
//! touches the file system.
//!
//! The key design decision: loading never stops at the first broken
//! `SKILL.md`. A file that breaks the Agent Skills rules becomes a check-up
//! problem (`skill-file-invalid`, naming the file and the field) beside every
//! other problem of the map; only input that cannot be used at all (a missing
//! path, JSON that does not parse, an unknown key) is a [`LoadError`].
//!
//! ```
//! use skillgraph::skill_core::{ReadSkillOffer, SkillMap};
//! use skillgraph::skill_tools::{read_skill, HostFormat};
//!
//! let map: SkillMap = serde_json::from_str(r#"{
//!     "skills": [{ "id": "triage", "description": "Sort the request" },
//!                { "id": "refunds", "description": "Refund an order" }],
//!     "entries": ["triage"],
//!     "routes": [{ "from": "triage", "to": "refunds" }]
//! }"#)?;
//! let checkup = skillgraph::skill_checkup::check_map(&map);
//! assert!(checkup.ok());
//! let offer = map.offer_at(Some("triage"), &[], false);
//! let tool = read_skill(&map.skills, Some(&offer)).expect("the map has skills");
//! let openai = tool.to_host(HostFormat::OpenAi).expect("read_skill is a valid name");
//! assert_eq!(openai["function"]["name"], "read_skill");
//! # Ok::<(), serde_json::Error>(())
//! ```

mod load;
mod prepare;
mod record_file;

pub use load::{LoadError, Loaded, MAP_FILE, McpServer, McpTransport, load};
pub use prepare::{PrepareError, Prepared, prepare};
pub use record_file::{RecordFileError, RecordWriter};
pub use skill_checkup;
pub use skill_core;
pub use skill_explain;
pub use skill_guard;
pub use skill_md;
pub use skill_session;
pub use skill_tools;
