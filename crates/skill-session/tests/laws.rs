//! The session's laws, as properties over random maps and random scripts:
//! a hidden id is never shown to the model; the cursor moves only at the end
//! of an iteration, by a route or an accepted pick; under `rails` no read
//! moves it; `visible_tools` is exactly the tools of the active skills; a
//! result is taken under a call number only while that call of its tool is
//! open; and replaying a record's inputs reproduces the record.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Value, json};
use skill_core::{Menu, MenuCandidate, SkillMap, ToolResult};
use skill_session::{CallAnswer, Graph, MoveBy, Posture, Session, read_record, replay};

/// Ids no one of which contains another, so a text naming one never names
/// another by accident.
const IDS: [&str; 8] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
];
const TOOLS: [&str; 4] = ["tool_one", "tool_two", "tool_three", "tool_four"];

fn skill() -> impl Strategy<Value = (u8, u8, Vec<usize>)> {
    (
        0u8..4,
        0u8..4,
        proptest::collection::vec(0..TOOLS.len(), 0..3),
    )
}

fn route() -> impl Strategy<Value = (usize, usize, u8, usize, u8)> {
    (0..IDS.len(), 0..IDS.len(), 0u8..4, 0..TOOLS.len(), 0u8..10)
}

/// A random map: its skills, entries and routes of every kind.
fn map() -> impl Strategy<Value = SkillMap> {
    (
        proptest::collection::vec(skill(), 2..=IDS.len()),
        proptest::collection::vec(0..IDS.len(), 0..3),
        proptest::collection::vec(route(), 0..10),
    )
        .prop_map(|(skills, entries, routes)| {
            let n = skills.len();
            let skills: Vec<Value> = skills
                .iter()
                .enumerate()
                .map(|(i, (trigger, mode, tools))| {
                    const TRIGGERS: [&str; 4] = ["llm-activated", "llm-activated", "rule", "always"];
                    const MODES: [&str; 4] = ["auto", "tool-only", "both", "system-prompt"];
                    json!({
                        "id": IDS[i],
                        "description": "does one thing",
                        "body": if *mode == 3 { "" } else { "follow the steps" },
                        "trigger": TRIGGERS[usize::from(*trigger)],
                        "surface_mode": MODES[usize::from(*mode)],
                        "tools": tools.iter().map(|t| json!({"name": TOOLS[*t]})).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let routes: Vec<Value> = routes
                .iter()
                .map(|(from, to, kind, tool, bound)| {
                    let (from, to) = (IDS[from % n], IDS[to % n]);
                    match kind {
                        0 => json!({"from": from, "to": to}),
                        1 => json!({"from": from, "to": to, "on_tool_return": TOOLS[*tool]}),
                        2 => json!({"from": from, "to": to, "guard": {"score": {"gte": bound}}}),
                        _ => json!({"from": from, "to": to, "on_tool_status": ["success"], "label": "done"}),
                    }
                })
                .collect();
            let entries: Vec<&str> = entries.iter().map(|e| IDS[e % n]).collect();
            serde_json::from_value(json!({"skills": skills, "entries": entries, "routes": routes}))
                .expect("a well-formed map")
        })
}

#[derive(Debug, Clone)]
enum Step {
    Turn(Option<Vec<usize>>),
    Tools,
    Read(usize),
    ReadUnknown,
    Observe(usize, u8, bool),
    Call(usize),
    /// A result under a call number: one given, never given, or answered.
    ObserveCall(u64, usize, u8, bool),
    End,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => proptest::option::of(proptest::collection::vec(0..IDS.len(), 1..3)).prop_map(Step::Turn),
        2 => Just(Step::Tools),
        4 => (0..IDS.len()).prop_map(Step::Read),
        1 => Just(Step::ReadUnknown),
        3 => (0..TOOLS.len(), 0u8..10, any::<bool>()).prop_map(|(t, s, ok)| Step::Observe(t, s, ok)),
        2 => (0..TOOLS.len()).prop_map(Step::Call),
        2 => (1u64..6, 0..TOOLS.len(), 0u8..10, any::<bool>()).prop_map(|(n, t, s, ok)| Step::ObserveCall(n, t, s, ok)),
        3 => Just(Step::End),
    ]
}

fn posture() -> impl Strategy<Value = Posture> {
    prop_oneof![
        Just(Posture::Assist),
        Just(Posture::Guard),
        Just(Posture::Rails)
    ]
}

/// The case: a map, a posture, the hidden ids and a script.
fn case() -> impl Strategy<Value = (SkillMap, Posture, Vec<bool>, Vec<Step>)> {
    (
        map(),
        posture(),
        proptest::collection::vec(any::<bool>(), IDS.len()),
        proptest::collection::vec(step(), 0..40),
    )
}

/// What the model is shown by one step: answers, refusals, offers, prompts.
struct Run {
    session: Session,
    shown: Vec<String>,
    /// Accepted reads since the turn began.
    read_this_turn: Vec<String>,
    /// The calls the gate admitted: number and tool.
    admitted: Vec<(u64, usize)>,
}

impl Run {
    fn step(&mut self, step: &Step) -> Result<(), TestCaseError> {
        let n = self.session.graph().map().skills.len();
        let before = self.session.cursor().map(str::to_owned);
        match step {
            Step::Turn(menu) => {
                let menu = menu.as_ref().map(|ids| Menu {
                    candidates: ids
                        .iter()
                        .map(|i| MenuCandidate {
                            id: IDS[i % n].to_owned(),
                            relevance: Some(0.4),
                        })
                        .collect(),
                    cursor_id: before.clone(),
                    stay: true,
                });
                self.session.begin_turn("please help", menu);
                self.read_this_turn.clear();
            }
            Step::Tools => {
                let tools = self.session.tools();
                self.shown.extend(
                    tools
                        .iter()
                        .filter(|t| t.name == "read_skill")
                        .map(|t| t.description.clone()),
                );
            }
            Step::Read(i) => {
                let answer = self
                    .session
                    .read_skill(IDS[i % n])
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                if answer.accepted() {
                    self.read_this_turn.push(answer.read.id.clone());
                }
                self.shown.push(answer.text);
            }
            Step::ReadUnknown => {
                let error = self.session.read_skill("gof").expect_err("not a skill");
                self.shown.push(error.to_string());
            }
            Step::Observe(tool, score, ok) => self.session.observe(ToolResult {
                tool_name: TOOLS[*tool].to_owned(),
                result: format!(r#"{{"score":{score}}}"#),
                status: ok.then(|| "success".to_owned()),
            }),
            Step::Call(tool) => match self.session.call_tool(TOOLS[*tool]) {
                CallAnswer::Admitted { call } => self.admitted.push((call, *tool)),
                CallAnswer::Refused { text, .. } => self.shown.push(text),
            },
            Step::ObserveCall(call, tool, score, ok) => {
                self.observe_call(*call, *tool, *score, *ok)?
            }
            Step::End => return self.end(before),
        }
        prop_assert_eq!(
            self.session.cursor(),
            before.as_deref(),
            "only the end of an iteration moves the cursor"
        );
        Ok(())
    }

    /// A result under `call` is taken exactly when `call` is an open call
    /// of its tool; refused, it changes nothing.
    fn observe_call(
        &mut self,
        call: u64,
        tool: usize,
        score: u8,
        ok: bool,
    ) -> Result<(), TestCaseError> {
        let open: Vec<u64> = self.session.open_calls().collect();
        let recorded = self.session.events().len();
        let answers = open.contains(&call) && self.admitted.contains(&(call, tool));
        let taken = self.session.observe_call(
            call,
            ToolResult {
                tool_name: TOOLS[tool].to_owned(),
                result: format!(r#"{{"score":{score}}}"#),
                status: ok.then(|| "success".to_owned()),
            },
        );
        prop_assert_eq!(
            taken.is_ok(),
            answers,
            "call {} of {}, open: {:?}",
            call,
            TOOLS[tool],
            open
        );
        let now: Vec<u64> = self.session.open_calls().collect();
        if answers {
            prop_assert_eq!(
                now,
                open.into_iter().filter(|n| *n != call).collect::<Vec<_>>()
            );
            prop_assert_eq!(self.session.events().len(), recorded + 1);
        } else {
            prop_assert_eq!(now, open, "a refused result closes nothing");
            prop_assert_eq!(
                self.session.events().len(),
                recorded,
                "a refused result is not recorded"
            );
        }
        Ok(())
    }

    fn end(&mut self, before: Option<String>) -> Result<(), TestCaseError> {
        let pick = self.session.pending_pick().map(str::to_owned);
        let moved = self.session.end_iteration().clone();
        prop_assert_eq!(&moved.from, &before);
        prop_assert_eq!(self.session.cursor(), moved.to.as_deref());
        let map = self.session.graph().map();
        match moved.by {
            MoveBy::Stay => prop_assert_eq!(&moved.to, &before),
            MoveBy::Model => {
                prop_assert_ne!(
                    self.session.posture(),
                    Posture::Rails,
                    "under rails no read moves the cursor"
                );
                prop_assert_eq!(&moved.to, &pick, "a model move takes the pending pick");
            }
            MoveBy::Route => {
                let route = moved.route.and_then(|index| map.routes.get(index));
                let declared = route.is_some_and(|r| {
                    Some(&r.from) == before.as_ref()
                        && Some(&r.to) == moved.to.as_ref()
                        && r.is_deterministic()
                });
                prop_assert!(
                    declared,
                    "a route move names the declared deterministic route it followed: {:?}",
                    moved.route
                );
            }
            other => prop_assert!(false, "a move this law does not know: {other:?}"),
        }
        Ok(())
    }

    fn visible_tools_are_the_active_skills_tools(&self) -> Result<(), TestCaseError> {
        let map = self.session.graph().map();
        let mut active: Vec<&str> = self.session.cursor().into_iter().collect();
        for id in &self.read_this_turn {
            if !active.contains(&id.as_str()) {
                active.push(id);
            }
        }
        prop_assert_eq!(self.session.active_skills(), active.clone());
        let mut tools: Vec<&str> = Vec::new();
        for skill in active.iter().filter_map(|id| map.skill(id)) {
            for tool in &skill.tools {
                if !tools.contains(&tool.name.as_str()) {
                    tools.push(&tool.name);
                }
            }
        }
        prop_assert_eq!(self.session.visible_tools(), tools);
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn sessions_keep_their_laws((map, posture, hide, script) in case()) {
        let n = map.skills.len();
        let hidden: Vec<String> = (0..n).filter(|i| hide[*i]).map(|i| IDS[i].to_owned()).collect();
        let graph = Arc::new(Graph::new(map).expect("the generated guards compile"));
        let mut run = Run {
            session: Session::new(Arc::clone(&graph), posture, hidden.clone()),
            shown: Vec::new(),
            read_this_turn: Vec::new(),
            admitted: Vec::new(),
        };
        run.session.begin_turn("hello", None);
        for step in &script {
            run.step(step)?;
            run.shown.push(run.session.system_prompt());
            run.visible_tools_are_the_active_skills_tools()?;
        }
        for text in &run.shown {
            for id in &hidden {
                prop_assert!(!text.contains(id.as_str()), "hidden {} shown in {:?}", id, text);
            }
        }
        let events = run.session.take_events();
        let text: String = events.iter().map(|e| e.to_line() + "\n").collect();
        let record = read_record(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&record.events, &events, "the record reads back as written");
        let replayed = replay(&graph, &events).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&replayed, &events, "replaying the inputs reproduces the record");
        let again = replay(&graph, &replayed).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(again, replayed, "a replayed record replays to itself");
    }

    #[test]
    fn a_record_cut_anywhere_reads_up_to_the_cut((map, posture, _hide, script) in case(), cut in any::<prop::sample::Index>()) {
        let graph = Arc::new(Graph::new(map).expect("the generated guards compile"));
        let mut run = Run { session: Session::new(graph, posture, Vec::new()), shown: Vec::new(), read_this_turn: Vec::new(), admitted: Vec::new() };
        for step in &script {
            run.step(step)?;
        }
        let text: String = run.session.events().iter().map(|e| e.to_line() + "\n").collect();
        let mut at = cut.index(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let record = read_record(&text[..at]).map_err(|e| TestCaseError::fail(format!("{e} at {at}")))?;
        let whole_lines = text[..at].matches('\n').count();
        match record.cut_at_line {
            Some(line) => {
                prop_assert_eq!(line, whole_lines + 1, "the warning names the cut line");
                prop_assert_eq!(record.events.len(), whole_lines);
            }
            None => prop_assert_eq!(record.events.len(), text[..at].lines().count()),
        }
        prop_assert_eq!(&record.events[..], &run.session.events()[..record.events.len()]);
    }
}
