//! The suites: how each turns a case's input into an answer shaped like its
//! `expect`.

use serde_json::{Map, Value, json};
use skill_core::{GuardView, classify_target, resolve_surface_mode};
use skill_guard::{Guard, Preconditions, mermaid_caption, plain_caption, unsatisfiable};

use crate::Case;
use crate::compare::json_equal;

/// Every suite this runner checks.
pub const SUITES: [&str; 6] = [
    "target.classify",
    "surface.resolve",
    "guard.compile",
    "guard.evaluate",
    "guard.unsatisfiable",
    "guard.caption",
];

/// Why a case did not pass.
#[derive(Debug, Clone, PartialEq)]
pub enum Mismatch {
    /// The answer differs from the reference's.
    Differs {
        /// What came back.
        actual: Value,
    },
    /// The input is not what the suite takes.
    BadInput(String),
    /// No such suite.
    UnknownSuite,
}

/// Check one case.
///
/// # Errors
///
/// A [`Mismatch`] saying how the case failed.
pub fn check_case(case: &Case) -> Result<(), Mismatch> {
    let input = &case.input;
    let actual = match case.suite.as_str() {
        "target.classify" => target_classify(input),
        "surface.resolve" => surface_resolve(input),
        "guard.compile" => guard_compile(input),
        "guard.evaluate" => guard_evaluate(input),
        "guard.unsatisfiable" => guard_unsatisfiable(input),
        "guard.caption" => guard_caption(input),
        _ => return Err(Mismatch::UnknownSuite),
    }
    .map_err(Mismatch::BadInput)?;
    if json_equal(&case.expect, &actual) {
        Ok(())
    } else {
        Err(Mismatch::Differs { actual })
    }
}

type Answer = Result<Value, String>;

fn field<'a>(input: &'a Value, key: &str) -> Result<&'a Value, String> {
    input
        .get(key)
        .ok_or_else(|| format!("input has no `{key}`"))
}

fn opt_str<'a>(input: &'a Value, key: &str) -> Result<Option<&'a str>, String> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(format!("`{key}` is {other}, not a string")),
    }
}

fn str_list<'a>(input: &'a Value, key: &str) -> Result<Vec<&'a str>, String> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .ok_or_else(|| format!("`{key}` holds {item}, not a string"))
            })
            .collect(),
        Some(other) => Err(format!("`{key}` is {other}, not a list")),
    }
}

fn target_classify(input: &Value) -> Answer {
    let target = opt_str(input, "target")?.ok_or("input has no `target`")?;
    let hops = str_list(input, "hops")?;
    let open = str_list(input, "open")?;
    let class = classify_target(opt_str(input, "cursor")?, target, &hops, &open);
    Ok(json!({ "class": class.as_str() }))
}

fn surface_resolve(input: &Value) -> Answer {
    let provider = opt_str(input, "provider")?.ok_or("input has no `provider`")?;
    let mode = resolve_surface_mode(provider, opt_str(input, "model")?);
    Ok(json!({ "mode": mode.as_str() }))
}

fn compiled(input: &Value) -> Result<Guard, String> {
    Guard::compile(field(input, "guard")?).map_err(|err| format!("the guard was refused: {err}"))
}

fn guard_compile(input: &Value) -> Answer {
    match Guard::compile(field(input, "guard")?) {
        Ok(guard) => Ok(json!({ "ok": true, "conditions": guard.data().conditions })),
        Err(err) => {
            let mut answer = Map::new();
            answer.insert("ok".into(), Value::Bool(false));
            answer.insert("refusal".into(), err.code().into());
            if let Some(key) = err.key() {
                answer.insert("key".into(), key.into());
            }
            if let Some(op) = err.op() {
                answer.insert("op".into(), op.into());
            }
            Ok(Value::Object(answer))
        }
    }
}

fn view_of(view: &Value) -> Result<GuardView<'_>, String> {
    let text = |key: &str| opt_str(view, key).map(Option::unwrap_or_default);
    let iteration = match view.get("iteration") {
        None => f64::NAN,
        Some(value) => value
            .as_f64()
            .ok_or_else(|| format!("`iteration` is {value}, not a number"))?,
    };
    Ok(GuardView {
        tool_name: text("toolName")?,
        result: text("result")?,
        status: opt_str(view, "status")?,
        iteration,
        user_message: text("userMessage")?,
        current_skill_id: opt_str(view, "currentSkillId")?,
    })
}

fn guard_evaluate(input: &Value) -> Answer {
    let guard = compiled(input)?;
    let view = view_of(field(input, "view")?)?;
    let evaluation = guard.evaluate(&view);
    if guard.test(&view) != evaluation.verdict {
        return Err(format!(
            "the predicate answered {} and the evaluator {}",
            !evaluation.verdict, evaluation.verdict
        ));
    }
    serde_json::to_value(&evaluation).map_err(|err| err.to_string())
}

fn guard_unsatisfiable(input: &Value) -> Answer {
    let guard = compiled(input)?;
    let pre = input.get("pre").unwrap_or(&Value::Null);
    let statuses: Option<Vec<String>> = match pre.get("on_tool_statuses") {
        None | Some(Value::Null) => None,
        Some(_) => Some(
            str_list(pre, "on_tool_statuses")?
                .into_iter()
                .map(str::to_owned)
                .collect(),
        ),
    };
    let pre = Preconditions {
        on_tool_statuses: statuses.as_deref(),
        on_tool_return_exact: opt_str(pre, "on_tool_return_exact")?,
    };
    Ok(match unsatisfiable(guard.data(), &pre) {
        None => json!({ "unsatisfiable": false }),
        Some(proof) => json!({ "unsatisfiable": true, "reason": proof.code(), "key": proof.key() }),
    })
}

fn guard_caption(input: &Value) -> Answer {
    let guard = compiled(input)?;
    Ok(json!({ "plain": plain_caption(guard.data()), "mermaid": mermaid_caption(guard.data()) }))
}
