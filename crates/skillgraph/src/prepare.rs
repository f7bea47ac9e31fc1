//! One preparation of a map for every driver that runs it (SPEC §9.10):
//! load, check-up, compile. `skillgraph play` and `skillgraph serve` both
//! start here, so a map runs the same way under each, and each has the
//! check-up's verdict to report before it runs.

use std::path::Path;

use skill_checkup::Checkup;
use skill_guard::RouteGuards;
use skill_guard::start::StartRules;
use skill_session::{Graph, GraphError};

use crate::load::{LoadError, Loaded, load};

/// A map loaded, checked and compiled: every route guard and start rule
/// compiled once, for the check-up and the session alike.
#[derive(Debug)]
#[non_exhaustive]
pub struct Prepared {
    /// The map as loaded, with its upstream servers and its loading
    /// problems.
    pub loaded: Loaded,
    /// The check-up of the map (the loading problems among its problems).
    pub checkup: Checkup,
    /// The route guards, compiled.
    pub guards: RouteGuards,
    /// The start rules, compiled.
    pub start: StartRules,
}

impl Prepared {
    /// The graph a session runs on: the loaded map with the guards and
    /// rules compiled here. A driver that changes the map first (a server
    /// expanding `allowed-tools` patterns against its upstreams) builds it
    /// with [`Graph::with_compiled`] instead.
    pub fn into_graph(self) -> Graph {
        Graph::with_compiled(self.loaded.map, self.guards, self.start)
    }

    /// How many errors the check-up found: a driver says so and runs the
    /// map as it is (`skillgraph check` shows them).
    pub fn checkup_errors(&self) -> usize {
        self.checkup.errors().count()
    }
}

/// Why a map could not be prepared.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrepareError {
    /// The map cannot be read.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A route guard or start rule of the map does not compile.
    #[error(transparent)]
    Graph(#[from] GraphError),
}

impl PrepareError {
    /// The stable code of the error: the loader's, or the refused guard's
    /// or rule's.
    pub fn code(&self) -> &'static str {
        match self {
            PrepareError::Load(err) => err.code(),
            PrepareError::Graph(err) => err.code(),
        }
    }
}

/// Load the map at `path` (a folder or a `skillmap.json` file), run its
/// check-up and compile its guards and start rules, each once.
///
/// ```
/// let prepared = skillgraph::prepare("../../examples/support-desk".as_ref())?;
/// assert_eq!(prepared.checkup_errors(), 0);
/// let graph = prepared.into_graph();
/// assert_eq!(graph.map().entries, ["triage"]);
/// # Ok::<(), skillgraph::PrepareError>(())
/// ```
///
/// # Errors
///
/// [`PrepareError::Load`] when the map cannot be read,
/// [`PrepareError::Graph`] when a guard or rule does not compile.
pub fn prepare(path: &Path) -> Result<Prepared, PrepareError> {
    let loaded = load(path)?;
    let guards = RouteGuards::compile(&loaded.map).map_err(GraphError::from)?;
    let start = StartRules::compile(loaded.map.start.as_ref()).map_err(GraphError::from)?;
    let checkup = loaded.checkup_with(&guards);
    Ok(Prepared {
        loaded,
        checkup,
        guards,
        start,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_guard_is_a_graph_error_with_its_code() {
        let dir = std::env::temp_dir().join(format!("skillgraph-prepare-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let map = dir.join("skillmap.json");
        std::fs::write(
            &map,
            r#"{"skills": [{"id": "a"}, {"id": "b"}], "entries": ["a"],
                "routes": [{"from": "a", "to": "b", "guard": {"x": {"near": 1}}}]}"#,
        )
        .unwrap();
        let refused = prepare(&map).unwrap_err();
        assert!(matches!(refused, PrepareError::Graph(_)), "{refused}");
        assert_eq!(refused.code(), "guard-refused");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
