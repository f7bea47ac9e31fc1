//! `skillgraph guard --guard G --witness`: a view that passes the guard and,
//! for each condition, a near miss (a view that fails that condition alone),
//! as text for people or as JSON whose views `--view` reads back. The search
//! is the library's ([`skill_guard::examine`]); this module prints it.

use std::fmt::Write as _;
use std::process::ExitCode;

use serde::Serialize;
use skillgraph::skill_core::GuardViewInput;
use skillgraph::skill_guard::{
    Condition, Examination, NearMiss, Redundancy, Setting, Witness, condition_caption, examine,
};

use super::{Failure, Format, compile_guard, guard_json, output};

/// Why no view passes, as JSON prints it.
#[derive(Serialize)]
struct Reason {
    code: &'static str,
    message: String,
}

/// One condition's near miss, as JSON prints it.
#[derive(Serialize)]
struct MissOut<'a> {
    condition: &'a Condition,
    /// A view that fails this condition alone.
    view: Option<&'a GuardViewInput>,
    /// Why no such view exists, when that is proven.
    never_decides: Option<String>,
}

/// The whole answer, as JSON prints it.
#[derive(Serialize)]
struct WitnessOut<'a> {
    witness: Option<&'a GuardViewInput>,
    unsatisfiable: Option<Reason>,
    near_misses: Vec<MissOut<'a>>,
}

/// Examine `guard` with no route around it and print what was found. Exit 0
/// whatever was found, 1 the guard is refused, 2 it is not JSON.
pub(super) fn witness_command(guard: &str, format: Format) -> Result<ExitCode, Failure> {
    let compiled = compile_guard(&guard_json(guard)?)?;
    let conditions = compiled.data().conditions();
    let examination = examine(conditions, &Setting::default());
    let out = answer(conditions, &examination);
    match format {
        Format::Json => output::print_json(&out)?,
        Format::Text => output::print(&render(&out)?)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn answer<'a>(conditions: &'a [Condition], examination: &'a Examination) -> WitnessOut<'a> {
    let unsatisfiable = match &examination.witness {
        Witness::Never(proof) => Some(Reason {
            code: proof.code(),
            message: proof.to_string(),
        }),
        _ => None,
    };
    let near_misses = conditions
        .iter()
        .zip(&examination.near_misses)
        .map(|(condition, miss)| MissOut {
            condition,
            view: match miss {
                NearMiss::Fails(view) => Some(view),
                _ => None,
            },
            never_decides: match miss {
                NearMiss::Redundant(why) => Some(redundancy(conditions, why)),
                _ => None,
            },
        })
        .collect();
    WitnessOut {
        witness: examination.witness.view(),
        unsatisfiable,
        near_misses,
    }
}

/// A condition as people read it: `key op value`.
fn spelled(condition: &Condition) -> String {
    condition_caption(&condition.key, condition.op, &condition.value)
}

fn redundancy(conditions: &[Condition], why: &Redundancy) -> String {
    let named = |index: &usize| {
        conditions
            .get(*index)
            .map_or_else(|| format!("condition {index}"), spelled)
    };
    match why {
        Redundancy::By(index) => format!("whatever passes `{}` passes it too", named(index)),
        Redundancy::ByAll(indices) => format!(
            "whatever passes {} together passes it too",
            indices
                .iter()
                .map(|i| format!("`{}`", named(i)))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
        Redundancy::ByItsKey => "every value its key can take passes it".to_owned(),
    }
}

fn render(out: &WitnessOut<'_>) -> Result<String, Failure> {
    let Some(view) = out.witness else {
        return Ok(match &out.unsatisfiable {
            Some(reason) => format!("no view passes [{}]: {}\n", reason.code, reason.message),
            None => "unknown: the search tried too few values to find a passing view or to prove there is none\n"
                .to_owned(),
        });
    };
    let mut text = format!("passes: {}\n", to_json_line(view)?);
    if !out.near_misses.is_empty() {
        text.push_str("near misses (each fails one condition alone):\n");
    }
    for miss in &out.near_misses {
        let what = match (miss.view, &miss.never_decides) {
            (Some(view), _) => to_json_line(view)?,
            (None, Some(why)) => format!("none, it never decides the verdict: {why}"),
            (None, None) => "unknown".to_owned(),
        };
        let _ = writeln!(text, "  {}: {what}", spelled(miss.condition));
    }
    Ok(text)
}

/// A view on one line, ready to paste after `--view`.
fn to_json_line(view: &GuardViewInput) -> Result<String, Failure> {
    serde_json::to_string(view)
        .map_err(|err| Failure::output(format!("cannot write the output as JSON: {err}")))
}
