//! A run as a page (SPEC §12): one self-contained HTML file that holds what
//! the explanation answers, for people who would rather look. The declared
//! map is inline SVG placed by a graph-layout library (`rust-sugiyama`),
//! with the path taken drawn over it; a timeline has one folded row per
//! iteration with the move and its cause; the active skills close it. No
//! script, no font, no style or image from anywhere else: the page reads
//! the same with JavaScript off. Every string from the record is escaped.

use std::collections::HashMap;
use std::fmt::Write as _;

use rust_sugiyama::configure::Config;
use skill_session::{
    ConditionRecord, Event, MoveBy, OfferEvent, OnSkip, ReadEvent, Record, ResultEvent, StepAction,
    TurnEvent,
};

use crate::explain::{ExplainError, Explanation, Link, explain};

/// The most characters of one string from the record a page shows; a
/// longer one is cut, saying how long it was.
const MAX_SHOWN: usize = 2_000;

/// The most characters of a skill id drawn in a map node.
const MAX_LABEL: usize = 32;

/// With more iterations than this, every iteration's row starts folded.
const UNFOLDED_UP_TO: usize = 200;

/// Node height, and the width of one character of a label, in SVG units.
const NODE_HEIGHT: f64 = 30.0;
const CHAR_WIDTH: f64 = 7.4;
const MARGIN: f64 = 24.0;

/// The page of `record`, as it stood at the end of `iteration` (else at
/// its end).
///
/// # Errors
///
/// [`ExplainError`] when the record cannot be explained as asked: no
/// `start` first, a second `start`, or an iteration it does not end.
///
/// ```
/// use std::sync::Arc;
/// use skill_core::{SkillMap, ToolResult};
/// use skill_session::{Graph, Posture, Session, read_record};
///
/// let map: SkillMap = serde_json::from_str(r#"{
///     "skills": [{ "id": "triage" }, { "id": "refunds" }],
///     "entries": ["triage"],
///     "routes": [{ "from": "triage", "to": "refunds", "guard": { "amount": { "gte": 100 } } }]
/// }"#)?;
/// let mut session = Session::new(Arc::new(Graph::new(map)?), Posture::Assist, Vec::new());
/// session.begin_turn("refund <b>4412</b>", None);
/// session.observe(ToolResult { tool_name: "lookup_order".into(), result: r#"{"amount":240}"#.into(), status: None });
/// session.end_iteration();
/// let text: String = session.events().iter().map(|e| e.to_line() + "\n").collect();
///
/// let page = skill_explain::page(&read_record(&text)?, None)?;
/// assert!(page.starts_with("<!DOCTYPE html>"));
/// assert!(page.contains("<svg") && page.contains("refunds"));
/// assert!(page.contains("refund &lt;b&gt;4412&lt;/b&gt;"), "the user's words, escaped");
/// assert!(!page.contains("<script"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn page(record: &Record, iteration: Option<u64>) -> Result<String, ExplainError> {
    let explanation = explain(record, iteration)?;
    let rows = rows(record, explanation.iteration, iteration.is_some());
    let mut out = String::with_capacity(16 * 1024 + rows.len() * 512);
    head(&explanation, &mut out);
    out.push_str("<h2>The map</h2>\n");
    map_svg(&explanation, &mut out);
    timeline(&explanation, &rows, &mut out);
    procedures(&explanation, &mut out);
    active(&explanation, &mut out);
    out.push_str("</main>\n</body>\n</html>\n");
    Ok(out)
}

/// What one iteration's row shows, beside its move.
#[derive(Default)]
struct Row<'r> {
    iteration: u64,
    turn: Option<&'r TurnEvent>,
    offer: Option<&'r OfferEvent>,
    reads: Vec<&'r ReadEvent>,
    results: Vec<&'r ResultEvent>,
}

/// The iterations up to `last` with what each holds, in order; without a
/// cut (`cut` false), an iteration the record began but did not end too.
fn rows(record: &Record, last: u64, cut: bool) -> Vec<Row<'_>> {
    let mut rows: Vec<Row<'_>> = Vec::new();
    for event in record.events.iter().skip(1) {
        let at = event.iteration();
        if cut && at > last {
            break;
        }
        if rows.last().is_none_or(|row| row.iteration != at) {
            rows.push(Row {
                iteration: at,
                ..Row::default()
            });
        }
        let Some(row) = rows.last_mut() else {
            continue;
        };
        match event {
            Event::Turn(turn) => row.turn = Some(turn),
            Event::Offer(offer) => row.offer = Some(offer),
            Event::Read(read) => row.reads.push(read),
            Event::Result(result) => row.results.push(result),
            _ => {}
        }
    }
    rows
}

/// The page's head and the run's summary.
fn head(explanation: &Explanation, out: &mut String) {
    let cursor = shown_id(explanation.cursor.as_deref());
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<title>skillgraph run: on {} at iteration {}</title>",
        esc(&cursor),
        explanation.iteration
    );
    out.push_str(STYLE);
    out.push_str("</head>\n<body>\n<main>\n<h1>A skillgraph run</h1>\n<p class=\"summary\">");
    let at = if explanation.chain.is_empty() {
        "; no iteration ended".to_owned()
    } else {
        format!(" at the end of iteration {}", explanation.iteration)
    };
    let moves = explanation
        .chain
        .iter()
        .filter(|link| link.by != MoveBy::Stay)
        .count();
    let moves = match moves {
        0 => "the cursor never moved".to_owned(),
        1 => "one move".to_owned(),
        n => format!("{n} moves"),
    };
    let _ = write!(
        out,
        "The cursor is on <b class=\"skill\">{}</b>{at}. It started on <b class=\"skill\">{}</b>; posture <code>{}</code>, call policy <code>{}</code>; {moves}.",
        esc(&cursor),
        esc(&shown_id(explanation.start.as_deref())),
        explanation.posture.as_str(),
        explanation.tools.as_str(),
    );
    out.push_str("</p>\n");
    if let Some(warning) = &explanation.warning {
        let _ = writeln!(out, "<p class=\"warning\">{}</p>", esc(warning));
    }
}

/// A node of the drawn map.
struct Node {
    id: String,
    /// Whether the declared map has the skill.
    declared: bool,
    width: f64,
}

/// An edge of the drawn map: a declared route, or a move.
struct Edge {
    from: usize,
    to: usize,
    /// The caption of the move(s) along it, when the path took it.
    path: Option<String>,
    declared: bool,
}

/// The declared map, and the skills the moves name beside it, as nodes
/// and edges.
fn graph(explanation: &Explanation) -> (Vec<Node>, Vec<Edge>) {
    let mut nodes: Vec<Node> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut add = |id: &str, declared: bool, nodes: &mut Vec<Node>| -> usize {
        if let Some(&at) = index.get(id) {
            return at;
        }
        let label = cut_label(id);
        nodes.push(Node {
            id: id.to_owned(),
            declared,
            width: 24.0 + CHAR_WIDTH * label.chars().count() as f64,
        });
        index.insert(id.to_owned(), nodes.len() - 1);
        nodes.len() - 1
    };
    for skill in &explanation.map.skills {
        add(&skill.id, true, &mut nodes);
    }
    let mut edges: Vec<Edge> = Vec::new();
    for route in &explanation.map.routes {
        let from = add(&route.from, false, &mut nodes);
        let to = add(&route.to, false, &mut nodes);
        if from != to && !edges.iter().any(|e| e.from == from && e.to == to) {
            edges.push(Edge {
                from,
                to,
                path: None,
                declared: true,
            });
        }
    }
    let mut step = 0;
    for link in explanation
        .chain
        .iter()
        .filter(|link| link.by != MoveBy::Stay)
    {
        step += 1;
        let (Some(from), Some(to)) = (link.from.as_deref(), link.to.as_deref()) else {
            continue;
        };
        let from = add(from, false, &mut nodes);
        let to = add(to, false, &mut nodes);
        if from == to {
            continue;
        }
        let caption = format!("{step}· it.{}", link.iteration);
        match edges.iter_mut().find(|e| e.from == from && e.to == to) {
            Some(edge) => {
                edge.path = Some(match edge.path.take() {
                    Some(earlier) => format!("{earlier}, {caption}"),
                    None => caption,
                });
                edge.declared &= link.declared;
            }
            None => edges.push(Edge {
                from,
                to,
                path: Some(caption),
                declared: link.declared,
            }),
        }
    }
    (nodes, edges)
}

/// The map drawn as inline SVG: the layout library places the nodes
/// (component by component, side by side), and edges are straight lines
/// between them, cut at the nodes' borders.
fn map_svg(explanation: &Explanation, out: &mut String) {
    let (nodes, edges) = graph(explanation);
    if nodes.is_empty() {
        out.push_str("<p>The record's map declares no skill.</p>\n");
        return;
    }
    let vertices: Vec<(u32, (f64, f64))> = nodes
        .iter()
        .enumerate()
        .map(|(at, node)| (at as u32, (node.width, NODE_HEIGHT)))
        .collect();
    let pairs = acyclic(nodes.len(), &edges, &entries(explanation, &nodes));
    let config = Config {
        vertex_spacing: 36.0,
        dummy_vertices: false,
        ..Config::default()
    };
    let layouts = rust_sugiyama::from_vertices_and_edges(&vertices, &pairs, &config);
    // Each component's nodes, moved right of the one before.
    let mut at: Vec<(f64, f64)> = vec![(0.0, 0.0); nodes.len()];
    let mut left = MARGIN;
    let mut height: f64 = 0.0;
    for (placed, _, _) in &layouts {
        let min_x = placed
            .iter()
            .map(|(id, (x, _))| x - nodes.get(*id).map_or(0.0, |n| n.width) / 2.0)
            .fold(f64::INFINITY, f64::min);
        let min_y = placed
            .iter()
            .map(|(_, (_, y))| y - NODE_HEIGHT / 2.0)
            .fold(f64::INFINITY, f64::min);
        let mut right = left;
        for (id, (x, y)) in placed {
            if let Some(slot) = at.get_mut(*id) {
                *slot = (left + x - min_x, MARGIN + 20.0 + y - min_y);
                let half = nodes.get(*id).map_or(0.0, |n| n.width) / 2.0;
                right = right.max(slot.0 + half);
                height = height.max(slot.1 + NODE_HEIGHT / 2.0);
            }
        }
        left = right + 2.0 * MARGIN;
    }
    let width = left - MARGIN;
    let height = height + MARGIN;
    let _ = writeln!(
        out,
        "<svg class=\"map\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width:.0} {height:.0}\" width=\"{width:.0}\" height=\"{height:.0}\" role=\"img\" aria-label=\"The declared map with the path taken\">"
    );
    out.push_str(SVG_DEFS);
    for edge in edges.iter().filter(|edge| edge.path.is_none()) {
        draw_edge(edge, &nodes, &at, out);
    }
    for (node, &(x, y)) in nodes.iter().zip(&at) {
        draw_node(node, (x, y), explanation, out);
    }
    for edge in edges.iter().filter(|edge| edge.path.is_some()) {
        draw_edge(edge, &nodes, &at, out);
    }
    out.push_str("</svg>\n<p class=\"legend\">Grey arrows: the declared routes. Blue: the path taken, each move numbered with its iteration. Red dashed: a move the map does not declare. A thick outline: the cursor at the end; a double border: an entry; a dashed border: a skill the map does not declare.</p>\n");
}

fn draw_node(node: &Node, (x, y): (f64, f64), explanation: &Explanation, out: &mut String) {
    let mut class = String::from("node");
    if explanation.map.entries.contains(&node.id) {
        class.push_str(" entry");
    }
    if explanation.cursor.as_deref() == Some(node.id.as_str()) {
        class.push_str(" cursor");
    }
    if !node.declared {
        class.push_str(" undeclared");
    }
    let (left, top) = (x - node.width / 2.0, y - NODE_HEIGHT / 2.0);
    let _ = write!(
        out,
        "<g class=\"{class}\"><title>{}</title><rect x=\"{left:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{NODE_HEIGHT}\" rx=\"6\"/>",
        esc(&shown_text(&node.id)),
        node.width
    );
    if class.contains("entry") {
        let _ = write!(
            out,
            "<rect class=\"inner\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{}\" rx=\"4\"/>",
            left + 3.0,
            top + 3.0,
            node.width - 6.0,
            NODE_HEIGHT - 6.0
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{x:.1}\" y=\"{:.1}\">{}</text></g>",
        y + 4.5,
        esc(&cut_label(&node.id))
    );
}

fn draw_edge(edge: &Edge, nodes: &[Node], at: &[(f64, f64)], out: &mut String) {
    let (Some(from), Some(to), Some(&a), Some(&b)) = (
        nodes.get(edge.from),
        nodes.get(edge.to),
        at.get(edge.from),
        at.get(edge.to),
    ) else {
        return;
    };
    let start = border(a, from.width, b);
    let end = border(b, to.width, a);
    let class = match (&edge.path, edge.declared) {
        (None, _) => "route",
        (Some(_), true) => "path",
        (Some(_), false) => "path undeclared-move",
    };
    let marker = if edge.path.is_some() {
        "taken"
    } else {
        "arrow"
    };
    let _ = write!(
        out,
        "<line class=\"{class}\" x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" marker-end=\"url(#{marker})\"/>",
        start.0, start.1, end.0, end.1
    );
    if let Some(caption) = &edge.path {
        let caption = if edge.declared {
            caption.clone()
        } else {
            format!("{caption} (undeclared)")
        };
        let _ = write!(
            out,
            "<text class=\"caption\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            (start.0 + end.0) / 2.0 + 6.0,
            (start.1 + end.1) / 2.0,
            esc(&caption)
        );
    }
    out.push('\n');
}

/// The indexes of the map's entries among `nodes`.
fn entries(explanation: &Explanation, nodes: &[Node]) -> Vec<usize> {
    nodes
        .iter()
        .enumerate()
        .filter(|(_, node)| explanation.map.entries.contains(&node.id))
        .map(|(at, _)| at)
        .collect()
}

/// The edges as the layout library is given them: each one pointed from
/// the node met first to the node met later in a depth-first walk from the
/// entries (then from every node not reached yet), and each pair once. So
/// the graph it lays out has no cycle: on some cyclic graphs the library
/// does not finish, and a record may declare any map. The edges are still
/// drawn as declared.
fn acyclic(count: usize, edges: &[Edge], entries: &[usize]) -> Vec<(u32, u32)> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); count];
    for edge in edges {
        if let Some(next) = out.get_mut(edge.from) {
            next.push(edge.to);
        }
    }
    let mut met: Vec<Option<usize>> = vec![None; count];
    let mut order = 0;
    for root in entries.iter().copied().chain(0..count) {
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            let Some(slot) = met.get_mut(node) else {
                continue;
            };
            if slot.is_some() {
                continue;
            }
            *slot = Some(order);
            order += 1;
            if let Some(next) = out.get(node) {
                stack.extend(next.iter().rev());
            }
        }
    }
    let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(edges.len());
    let mut seen = std::collections::HashSet::with_capacity(edges.len());
    for edge in edges {
        let (Some(Some(a)), Some(Some(b))) = (met.get(edge.from), met.get(edge.to)) else {
            continue;
        };
        let pair = if a < b {
            (edge.from as u32, edge.to as u32)
        } else {
            (edge.to as u32, edge.from as u32)
        };
        if pair.0 != pair.1 && seen.insert(pair) {
            pairs.push(pair);
        }
    }
    pairs
}

/// Where the line from the centre `centre` of a node `width` wide toward
/// `toward` leaves the node's box.
fn border(centre: (f64, f64), width: f64, toward: (f64, f64)) -> (f64, f64) {
    let (dx, dy) = (toward.0 - centre.0, toward.1 - centre.1);
    if dx == 0.0 && dy == 0.0 {
        return centre;
    }
    let (half_w, half_h) = (width / 2.0 + 2.0, NODE_HEIGHT / 2.0 + 2.0);
    let scale = (half_w / dx.abs()).min(half_h / dy.abs());
    (centre.0 + dx * scale, centre.1 + dy * scale)
}

/// The timeline: one row per iteration, folded where there are many.
fn timeline(explanation: &Explanation, rows: &[Row<'_>], out: &mut String) {
    out.push_str("<h2>Iteration by iteration</h2>\n");
    if rows.is_empty() {
        out.push_str("<p>The record holds no iteration.</p>\n");
        return;
    }
    // A rule's move is told by its turn's line, so a row's link is the move
    // that ended the iteration.
    let links: HashMap<u64, &Link> = explanation
        .chain
        .iter()
        .filter(|link| link.by != MoveBy::Rule)
        .map(|link| (link.iteration, link))
        .collect();
    let descriptions: HashMap<&str, &str> = explanation
        .map
        .skills
        .iter()
        .filter_map(|skill| Some((skill.id.as_str(), skill.description.as_deref()?)))
        .collect();
    let unfold = rows.len() <= UNFOLDED_UP_TO;
    out.push_str("<ol class=\"timeline\">\n");
    for row in rows {
        let link = links.get(&row.iteration).copied();
        let refused_calls: Vec<_> = explanation
            .refused_calls
            .iter()
            .filter(|call| call.iteration == row.iteration)
            .collect();
        let open_calls: Vec<_> = explanation
            .open_calls
            .iter()
            .filter(|call| call.iteration == row.iteration)
            .collect();
        let eventful = link.is_some_and(|link| link.by != MoveBy::Stay || !link.closed.is_empty())
            || row.reads.iter().any(|read| read.refusal.is_some())
            || row.results.iter().any(|result| result.error.is_some())
            || !refused_calls.is_empty()
            || !open_calls.is_empty();
        let open = if unfold && eventful { " open" } else { "" };
        let turn = if row.turn.is_some() { " turn" } else { "" };
        let _ = writeln!(
            out,
            "<li id=\"iteration-{n}\" class=\"iteration{turn}\"><details{open}><summary>Iteration {n}: {}</summary>",
            esc(&summary(link)),
            n = row.iteration
        );
        if let Some(turn) = row.turn {
            let _ = writeln!(
                out,
                "<p class=\"turn\">A turn began. The user said: <q>{}</q></p>",
                esc(&shown_text(&turn.user_message))
            );
            if let Some(routed) = &turn.routed {
                let by = match &routed.label {
                    Some(label) => {
                        format!("The rule “{}” (rules[{}])", cut_label(label), routed.rule)
                    }
                    None => format!("The rule rules[{}]", routed.rule),
                };
                let _ = writeln!(
                    out,
                    "<p class=\"rule\">{} started it on <code>{}</code>: <q>{}</q> in the message.</p>",
                    esc(&by),
                    esc(&shown_text(&routed.use_skill)),
                    esc(&shown_text(&routed.witness))
                );
            }
        }
        if let Some(link) = link {
            cause(link, out);
        }
        for read in &row.reads {
            read_line(read, out);
        }
        for call in refused_calls {
            let _ = writeln!(
                out,
                "<p class=\"refused\">The call of <code>{}</code> was refused (<code>{}</code>); the answer named {}.</p>",
                esc(&shown_text(&call.tool_name)),
                call.refusal.code(),
                named(&call.named)
            );
        }
        for result in &row.results {
            result_line(result, out);
        }
        for call in open_calls {
            let _ = writeln!(
                out,
                "<p class=\"failed\">Call {} of <code>{}</code> was accepted and forwarded; the record holds no result for it (still running, or the writer stopped mid-call).</p>",
                call.call,
                esc(&shown_text(&call.tool_name))
            );
        }
        if let Some(offer) = row.offer {
            let words = offer.view.view(|id| descriptions.get(id).copied()).render();
            let _ = writeln!(
                out,
                "<details class=\"offer\"><summary>The offer the model was shown</summary><pre>{}</pre></details>",
                esc(&shown_text(&words))
            );
        }
        out.push_str("</details></li>\n");
    }
    out.push_str("</ol>\n");
}

/// One line for a row's summary: the move, or that the iteration did not
/// end.
fn summary(link: Option<&Link>) -> String {
    let Some(link) = link else {
        return "not ended in this record".to_owned();
    };
    let (from, to) = (shown_id(link.from.as_deref()), shown_id(link.to.as_deref()));
    let how = match link.by {
        MoveBy::Stay => return format!("stayed on {from}"),
        MoveBy::Route => match link.route.as_ref().and_then(|route| route.label.as_deref()) {
            Some(label) => format!("by the route \"{}\"", cut_label(label)),
            None => "by a route".to_owned(),
        },
        MoveBy::Model => "by the model's pick".to_owned(),
        other => format!("by {}", other.as_str()),
    };
    let undeclared = if link.declared {
        ""
    } else {
        " (the map declares no such move)"
    };
    format!(
        "{} → {} {how}{undeclared}",
        cut_label(&from),
        cut_label(&to)
    )
}

/// A move's cause: the route's guard as a table, the closed routes, a
/// superseded pick, later conflicting results, or the model's offer.
fn cause(link: &Link, out: &mut String) {
    if !link.declared {
        out.push_str("<p class=\"undeclared-move\">The map declares no such move.</p>\n");
    }
    if let Some(route) = &link.route {
        let mut said = String::from("The route");
        if let Some(index) = route.index {
            let _ = write!(said, " #{index}");
        }
        if let Some(label) = &route.label {
            let _ = write!(said, " \"{}\"", esc(&shown_text(label)));
        }
        said.push_str(" fired");
        if let Some(tool) = &route.tool_name {
            let _ = write!(
                said,
                " on the result of <code>{}</code>",
                esc(&shown_text(tool))
            );
        }
        if let Some(status) = &route.status {
            let _ = write!(said, " (status <code>{}</code>)", esc(&shown_text(status)));
        }
        if !route.offered {
            said.push_str(", a tool the active skills did not carry");
        }
        let _ = writeln!(out, "<p>{said}.</p>");
        if route.conditions.is_empty() {
            out.push_str("<p>It has no guard.</p>\n");
        } else {
            conditions(&route.conditions, out);
        }
    }
    if let Some(pick) = &link.pick {
        let _ = write!(
            out,
            "<p>The model picked <b class=\"skill\">{}</b>",
            esc(&shown_id(link.to.as_deref()))
        );
        match pick.offer_iteration {
            Some(at) => {
                let _ = write!(
                    out,
                    " from the offer of <a href=\"#iteration-{at}\">iteration {at}</a>"
                );
            }
            None => out.push_str(", with no offer on the record before it"),
        }
        if pick.declined_offer {
            out.push_str("; it declined the turn's menu");
        }
        out.push_str(".</p>\n");
    }
    if let Some(pick) = &link.superseded {
        let _ = writeln!(
            out,
            "<p>The route superseded the model's pick of <b class=\"skill\">{}</b>.</p>",
            esc(&shown_text(pick))
        );
    }
    for conflict in &link.conflict {
        let _ = writeln!(
            out,
            "<p>A later result of <code>{}</code> led to <b class=\"skill\">{}</b>; the first result wins.</p>",
            esc(&shown_text(&conflict.tool_name)),
            esc(&shown_text(&conflict.to))
        );
    }
    for closed in &link.closed {
        let _ = writeln!(
            out,
            "<p class=\"closed\">The route {} → {} closed on the result of <code>{}</code>:</p>",
            esc(&shown_text(&closed.from)),
            esc(&shown_text(&closed.to)),
            esc(&shown_text(&closed.tool_name))
        );
        conditions(&closed.failed, out);
    }
}

/// A guard's conditions as a table: key, operator, value, actual, passed.
fn conditions(conditions: &[ConditionRecord], out: &mut String) {
    out.push_str("<table class=\"guard\"><thead><tr><th>key</th><th>operator</th><th>value</th><th>actual</th><th>passed</th></tr></thead><tbody>\n");
    for condition in conditions {
        let value = serde_json::to_string(&condition.value).unwrap_or_default();
        let (class, passed) = if condition.passed {
            ("pass", "✓ yes")
        } else {
            ("fail", "✗ no")
        };
        let _ = writeln!(
            out,
            "<tr class=\"{class}\"><td><code>{}</code></td><td>{} <code>{}</code></td><td><code>{}</code></td><td><code>{}</code></td><td>{passed}</td></tr>",
            esc(&shown_text(&condition.key)),
            esc(condition.op.symbol()),
            esc(condition.op.as_str()),
            esc(&shown_text(&value)),
            esc(&shown_text(&condition.actual_summary))
        );
    }
    out.push_str("</tbody></table>\n");
}

fn read_line(read: &ReadEvent, out: &mut String) {
    match read.refusal {
        Some(refusal) => {
            let _ = writeln!(
                out,
                "<p class=\"refused\">A read of <b class=\"skill\">{}</b> was refused (<code>{}</code>, class <code>{}</code>); the answer named {}.</p>",
                esc(&shown_text(&read.id)),
                refusal.code(),
                read.class.as_str(),
                named(read.allowed.as_deref().unwrap_or_default())
            );
        }
        None => {
            let _ = writeln!(
                out,
                "<p>The model read <b class=\"skill\">{}</b>{}.</p>",
                esc(&shown_text(&read.id)),
                if read.accepted { "" } else { " (not accepted)" }
            );
        }
    }
}

fn result_line(result: &ResultEvent, out: &mut String) {
    let offered = if result.offered {
        ""
    } else {
        ", a tool the active skills did not carry"
    };
    match &result.error {
        Some(error) => {
            let _ = writeln!(
                out,
                "<p class=\"failed\">The call of <code>{}</code> got no answer to route on{offered}: {}</p>",
                esc(&shown_text(&result.tool_name)),
                esc(&shown_text(error))
            );
        }
        None => {
            let status = result
                .status
                .as_deref()
                .map(|status| format!(", status <code>{}</code>", esc(&shown_text(status))))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "<details class=\"result\"><summary><code>{}</code> answered ({} bytes{status}){offered}</summary><pre>{}</pre></details>",
                esc(&shown_text(&result.tool_name)),
                result.bytes,
                esc(&shown_text(&result.result))
            );
        }
    }
}

/// The active skills at the end, with their tools.
/// Each stepped skill that held the cursor, its procedure as a checklist
/// (SPEC §15.9): every step done (in which iteration), skipped (why, and
/// what `on_skip` made of it), or not reached; and every call a step held
/// out. Nothing when no procedure ran.
fn procedures(explanation: &Explanation, out: &mut String) {
    let mut skills: Vec<&str> = Vec::new();
    for event in &explanation.steps {
        if !skills.contains(&event.step.skill.as_str()) {
            skills.push(&event.step.skill);
        }
    }
    if skills.is_empty() {
        return;
    }
    out.push_str("<h2>Procedures</h2>\n");
    for id in skills {
        let declared = explanation
            .map
            .skills
            .iter()
            .find(|skill| skill.id == id)
            .and_then(|skill| skill.steps.as_deref())
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<h3><b class=\"skill\">{}</b></h3>\n<ol class=\"procedure\">",
            esc(&shown_text(id))
        );
        for (at, step) in declared.iter().enumerate() {
            let number = at + 1;
            let said = explanation
                .steps
                .iter()
                .rev()
                .filter(|event| event.step.skill == id && event.step.step == number)
                .find_map(|event| match &event.action {
                    StepAction::Advanced { .. } => {
                        Some(format!("✓ done in iteration {}", event.iteration))
                    }
                    StepAction::Skipped {
                        reason, on_skip, ..
                    } => Some(format!(
                        "↷ skipped in iteration {} (on_skip {}): “{}”",
                        event.iteration,
                        match on_skip {
                            OnSkip::Advance => "advance",
                            OnSkip::Hold => "hold",
                        },
                        shown_text(reason)
                    )),
                    _ => None,
                })
                .unwrap_or_else(|| "☐ not reached".to_owned());
            let _ = writeln!(
                out,
                "<li><code>{}</code>: {}. <i>{}</i></li>",
                esc(&shown_text(&step.tool)),
                esc(&shown_text(&step.note)),
                esc(&said)
            );
        }
        out.push_str("</ol>\n");
        for call in explanation
            .refused_calls
            .iter()
            .filter(|call| call.held.as_ref().is_some_and(|held| held.skill == id))
        {
            if let Some(held) = &call.held {
                let _ = writeln!(
                    out,
                    "<p class=\"refused\">Iteration {}: <code>{}</code> was held out by step {} (<code>{}</code>).</p>",
                    call.iteration,
                    esc(&shown_text(&call.tool_name)),
                    held.step,
                    esc(&shown_text(&held.tool))
                );
            }
        }
    }
}

fn active(explanation: &Explanation, out: &mut String) {
    out.push_str("<h2>Active at the end</h2>\n");
    if explanation.active.is_empty() {
        out.push_str("<p>No skill is active.</p>\n");
        return;
    }
    out.push_str("<ul class=\"active\">\n");
    for skill in &explanation.active {
        let tools = if skill.tools.is_empty() {
            "no tools".to_owned()
        } else {
            skill
                .tools
                .iter()
                .map(|tool| format!("<code>{}</code>", esc(&shown_text(tool))))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(
            out,
            "<li><b class=\"skill\">{}</b>: {tools}</li>",
            esc(&shown_text(&skill.id))
        );
    }
    out.push_str("</ul>\n");
}

/// The ids an answer named, escaped, or "none".
fn named(ids: &[String]) -> String {
    if ids.is_empty() {
        return "none".to_owned();
    }
    ids.iter()
        .map(|id| format!("<b class=\"skill\">{}</b>", esc(&shown_text(id))))
        .collect::<Vec<_>>()
        .join(", ")
}

fn shown_id(id: Option<&str>) -> String {
    id.map_or_else(|| "no skill".to_owned(), shown_text)
}

/// `text`, cut to [`MAX_SHOWN`] characters, saying how long it was.
fn shown_text(text: &str) -> String {
    if text.chars().count() <= MAX_SHOWN {
        return text.to_owned();
    }
    let kept: String = text.chars().take(MAX_SHOWN).collect();
    format!("{kept}… (cut: {} bytes in all)", text.len())
}

/// An id short enough to draw in a node.
fn cut_label(id: &str) -> String {
    if id.chars().count() <= MAX_LABEL {
        return id.to_owned();
    }
    let kept: String = id.chars().take(MAX_LABEL - 1).collect();
    format!("{kept}…")
}

/// `text` safe anywhere in HTML or SVG text and in quoted attributes.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The arrow heads of the map's edges.
const SVG_DEFS: &str = "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#8a8f98\"/></marker><marker id=\"taken\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#1f5fbf\"/></marker></defs>\n";

/// The page's one style sheet, inline.
const STYLE: &str = "<style>
body { font: 15px/1.45 system-ui, sans-serif; color: #1d2126; background: #fbfbfa; margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
code, pre { font: 13px/1.4 ui-monospace, monospace; }
pre { white-space: pre-wrap; background: #f1f2f4; padding: .6rem; border-radius: 4px; overflow-wrap: anywhere; }
.summary { font-size: 1.05rem; } .warning { color: #8a4b00; }
b.skill { color: #1f3f73; overflow-wrap: anywhere; }
svg.map { max-width: 100%; height: auto; background: #fff; border: 1px solid #dde0e4; border-radius: 6px; }
.node rect { fill: #fff; stroke: #6b7380; stroke-width: 1.2; }
.node.entry rect.inner { fill: none; stroke: #6b7380; stroke-width: 1; }
.node.cursor rect { fill: #e8f0fc; stroke: #1f3f73; stroke-width: 3; }
.node.undeclared rect { stroke-dasharray: 4 3; }
.node text { font: 12.5px ui-monospace, monospace; text-anchor: middle; fill: #1d2126; }
line.route { stroke: #8a8f98; stroke-width: 1.2; }
line.path { stroke: #1f5fbf; stroke-width: 3; }
line.undeclared-move { stroke: #c0392b; stroke-dasharray: 6 4; }
text.caption { font: 11.5px system-ui, sans-serif; fill: #1f5fbf; }
.legend { color: #5b626c; font-size: .9rem; }
ol.timeline { padding-left: 0; list-style: none; }
li.iteration { border-left: 3px solid #dde0e4; padding: .2rem .8rem; margin: .3rem 0; }
li.iteration.turn { border-left-color: #1f5fbf; }
summary { cursor: pointer; }
table.guard { border-collapse: collapse; margin: .4rem 0; }
table.guard th, table.guard td { border: 1px solid #dde0e4; padding: .2rem .5rem; text-align: left; }
tr.pass td:last-child { color: #1e7a3a; } tr.fail td:last-child { color: #b3261e; }
.refused, .failed, .undeclared-move, .closed { color: #8c2b20; }
</style>
";
