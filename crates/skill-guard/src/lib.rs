//! Declarative data guards for skill-graph routes.
//!
//! `skill-guard` owns everything a guard is and does: the grammar
//! (`{ key: { op: value } }`, eight operators, every condition ANDed), one
//! compilation into a [`Guard`] that holds its serializable [`GuardData`], its
//! predicate ([`Guard::test`]) and its evidence evaluator
//! ([`Guard::evaluate`]); what a guard provably never passes
//! ([`unsatisfiable`]); how it draws ([`plain_caption`], [`mermaid_caption`]);
//! and the JavaScript value semantics that make a guard's verdict and
//! evidence the same in every implementation ([`js`]).
//!
//! It must never do I/O, print or keep global state, and it depends on
//! `skill-core` alone among skillgraph crates.
//!
//! The key design decision: the predicate reads a tool result by scanning it
//! once and building values only for the top-level fields the guard names.
//! Routing runs on every tool result of every iteration, so a guard costs
//! little more than validating its input once; building a JSON tree would cost
//! several times that.
//!
//! ```
//! use serde_json::json;
//! use skill_core::GuardView;
//! use skill_guard::{mermaid_caption, Guard};
//!
//! let guard = Guard::compile(&json!({
//!     "riskLevel": { "in": ["high", "critical"] },
//!     "score": { "gte": 0.8 }
//! }))?;
//! let view = GuardView::new("lookup_order", r#"{"riskLevel":"high","score":0.6}"#);
//! let evaluation = guard.evaluate(&view);
//! assert!(!evaluation.verdict);
//! assert_eq!(evaluation.conditions[1].actual_summary, "0.6");
//! assert_eq!(mermaid_caption(guard.data()), "when riskLevel in [high, critical] AND score ≥ 0.8");
//! # Ok::<(), skill_guard::CompileError>(())
//! ```

mod builder;
mod caption;
mod compile;
mod data;
mod evaluate;
mod hop;
mod js_number;
mod js_value;
mod result_fields;
mod route;
pub mod start;
mod text;
mod unsatisfiable;
mod witness;

pub use builder::GuardBuilder;
pub use caption::{condition_caption, evidence_caption, mermaid_caption, plain_caption};
pub use compile::{CompileError, Guard, MAX_LIST_LEN, RESERVED_KEYS};
pub use data::{Condition, ConditionValue, GuardData, GuardValue, Operator, ValueList};
pub use evaluate::{ConditionEvidence, Evaluation, EvidenceList, Summary};
pub use hop::HOP_KEYS;
pub use route::{
    CompiledMap, Conflict, CursorMove, GuardEvaluation, Iteration, MapGuardErrors, RouteGuardError,
    RouteGuards, preconditions_pass,
};
pub use text::Text;
pub use unsatisfiable::{Preconditions, Unsatisfiable, unsatisfiable};
pub use witness::{
    Examination, NearMiss, NoWitness, Redundancy, Setting, Witness, examine, witness,
};

/// JavaScript value semantics that guards reproduce, for callers that need
/// to print or read values the same way.
pub mod js {
    pub use crate::js_number::{
        from_js_string as number_from_string, is_js_space as is_space,
        to_js_string as number_to_string,
    };
}
