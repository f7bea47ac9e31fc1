//! The suites: how each turns a case's input into an answer shaped like its
//! `expect`.

use serde::Deserialize;
use serde_json::{Map, Value, json};
use skill_checkup::{
    Vocabulary, assert_vocabulary, check_vocabularies, tool_only_delivery_refusal,
};
use skill_core::{
    GuardViewInput, ReadSkillOffer, Skill, Start, classify_target, resolve_surface_mode,
    resolved_surface_mode_of,
};
use skill_guard::start::{Matcher, Message, Outcome, StartRules};
use skill_guard::{Guard, Preconditions, mermaid_caption, plain_caption, unsatisfiable};
use skill_tools::{Execute, NO_DESCRIPTION, list_skills, offer_view, read_skill};

use crate::Case;
use crate::compare::json_equal;

/// Every suite this runner checks.
pub const SUITES: [&str; 14] = [
    "target.classify",
    "surface.resolve",
    "guard.compile",
    "guard.evaluate",
    "guard.unsatisfiable",
    "guard.caption",
    "vocabulary.assert",
    "vocabulary.check",
    "delivery.refusal",
    "delivery.resolved_mode",
    "tools.read_skill",
    "tools.list_skills",
    "turn.match",
    "turn.route",
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
        "vocabulary.assert" => vocabulary_assert(input),
        "vocabulary.check" => vocabulary_check(input),
        "delivery.refusal" => delivery_refusal(input),
        "delivery.resolved_mode" => delivery_resolved_mode(input),
        "tools.read_skill" => tools_read_skill(input, &case.expect),
        "tools.list_skills" => tools_list_skills(input),
        "turn.match" => turn_match(input),
        "turn.route" => turn_route(input),
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
        Ok(guard) => Ok(json!({ "ok": true, "conditions": guard.data().conditions() })),
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

fn guard_evaluate(input: &Value) -> Answer {
    let guard = compiled(input)?;
    let view = GuardViewInput::deserialize(field(input, "view")?)
        .map_err(|err| format!("the view is unusable: {err}"))?;
    let view = view.view();
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

fn skills_of(input: &Value) -> Result<Vec<Skill>, String> {
    serde_json::from_value(field(input, "skills")?.clone())
        .map_err(|err| format!("`skills` are not skills: {err}"))
}

fn vocabulary_assert(input: &Value) -> Answer {
    let what = opt_str(input, "what")?.ok_or("input has no `what`")?;
    let what = Vocabulary::parse(what)
        .ok_or_else(|| format!("`what` is \"{what}\", not produces or consumes"))?;
    Ok(match assert_vocabulary(what, input.get("kinds")) {
        Ok(()) => json!({ "ok": true }),
        Err(err) => json!({ "ok": false, "refusal": err.code() }),
    })
}

fn vocabulary_check(input: &Value) -> Answer {
    let warnings: Vec<Value> = check_vocabularies(&skills_of(input)?)
        .into_iter()
        .map(|problem| {
            let mut warning = Map::new();
            warning.insert("skill".into(), problem.skill().into());
            warning.insert("step".into(), problem.step().into());
            if let Some(tool) = problem.tool() {
                warning.insert("tool".into(), tool.into());
            }
            warning.insert("kind".into(), problem.kind().into());
            Value::Object(warning)
        })
        .collect();
    Ok(json!({ "warnings": warnings }))
}

fn delivery_refusal(input: &Value) -> Answer {
    let offenders = tool_only_delivery_refusal(&skills_of(input)?)
        .map(|r| r.offenders)
        .unwrap_or_default();
    Ok(json!({ "offenders": offenders }))
}

fn delivery_resolved_mode(input: &Value) -> Answer {
    let skill: Skill = serde_json::from_value(field(input, "skill")?.clone())
        .map_err(|err| format!("`skill` is not a skill: {err}"))?;
    let mode = resolved_surface_mode_of(
        &skill,
        opt_str(input, "provider")?,
        opt_str(input, "model")?,
    );
    Ok(json!({ "mode": mode.as_str() }))
}

/// The id the reference executed is part of its answer: call ours with it.
fn tools_read_skill(input: &Value, expect: &Value) -> Answer {
    let skills = skills_of(input)?;
    let offer: Option<ReadSkillOffer> = match input.get("offer") {
        None | Some(Value::Null) => None,
        Some(offer) => Some(
            serde_json::from_value(offer.clone())
                .map_err(|err| format!("`offer` is not an offer: {err}"))?,
        ),
    };
    let Some(tool) = read_skill(&skills, offer.as_ref()) else {
        return Ok(json!({ "withheld": true }));
    };
    let Execute::ReadSkill(call) = &tool.execute else {
        return Err("read_skill returned another tool".into());
    };
    let id = expect
        .pointer("/execute/id")
        .and_then(Value::as_str)
        .unwrap_or("ghost");
    if tool
        .execute
        .call(&json!({ "id": id }))
        .map_err(|err| err.to_string())?
        != call.answer_text(id)
    {
        return Err("execute and the typed answer disagree".into());
    }
    Ok(json!({
        "withheld": false,
        "enum": tool.input_schema.pointer("/properties/id/enum"),
        "view": offer_view(&skills, offer.as_ref()),
        "execute": { "id": id, "kind": call.answer(id).kind() },
    }))
}

fn tools_list_skills(input: &Value) -> Answer {
    let skills = skills_of(input)?;
    let Some(tool) = list_skills(&skills) else {
        return Ok(json!({ "withheld": true }));
    };
    let text = tool
        .execute
        .call(&json!({}))
        .map_err(|err| err.to_string())?;
    let catalog: Vec<Value> = serde_json::from_str(&text)
        .map_err(|err| format!("list_skills did not answer JSON: {err}"))?;
    let catalog: Vec<Value> = catalog
        .into_iter()
        .zip(&skills)
        .map(|(mut entry, skill)| {
            if skill.description.is_none() && entry["description"] == NO_DESCRIPTION {
                entry["description"] = Value::Null;
            }
            entry
        })
        .collect();
    Ok(json!({ "withheld": false, "catalog": catalog }))
}

fn turn_match(input: &Value) -> Answer {
    let message = field(input, "message")?
        .as_str()
        .ok_or("`message` is not a string")?;
    let matcher = match Matcher::compile(field(input, "match")?) {
        Ok(matcher) => matcher,
        Err(error) => return Ok(json!({ "ok": false, "refusal": error.code() })),
    };
    Ok(match matcher.find(&Message::new(message)) {
        Outcome::Matched(witness) => json!({ "ok": true, "matched": true, "witness": witness }),
        Outcome::Missed => json!({ "ok": true, "matched": false, "witness": null }),
        outcome => return Err(format!("the matcher could not decide: {outcome:?}")),
    })
}

fn turn_route(input: &Value) -> Answer {
    let start = Start {
        rules: serde_json::from_value(field(input, "rules")?.clone())
            .map_err(|e| format!("`rules`: {e}"))?,
        never_routes: Vec::new(),
    };
    let message = field(input, "message")?
        .as_str()
        .ok_or("`message` is not a string")?;
    let hidden = match input.get("hidden") {
        Some(_) => str_list(input, "hidden")?,
        None => Vec::new(),
    };
    let rules = StartRules::compile(Some(&start)).map_err(|e| e.to_string())?;
    let routing = rules.route(message, |id| hidden.contains(&id));
    if !routing.gave_up.is_empty() {
        return Err(format!("rules {:?} could not decide", routing.gave_up));
    }
    Ok(match routing.routed {
        Some(routed) => json!({ "routed": {
            "rule": routed.rule, "use": routed.use_skill, "witness": routed.witness,
        } }),
        None => json!({ "routed": null }),
    })
}
