//! What every run of one server shares (SPEC §9): the graph and its
//! session settings, the upstream servers, the skills extension's files,
//! what each set of roles is shown (the instructions and the one stable
//! list of the sessionless generation: a [`Lens`], SPEC §14.8), and where
//! runs are kept; and a new run, with its record, made here.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use rmcp::model::Tool;
use rmcp::service::Peer;
use rmcp::{ErrorData, RoleServer};
use skillgraph::RecordWriter;
use skillgraph::skill_core::roles_taken;
use skillgraph::skill_session::{Graph, Session, SessionConfig};

use crate::ServeError;
use crate::doorway;
use crate::record::RecordSink;
use crate::runs::{Kept, Runs, Slot, State, lock, mint_handle};
use crate::skill_files::SkillFiles;
use crate::spans::Tracing;
use crate::store::Store;
use crate::translate;
use crate::upstream::Upstreams;

/// What the principals that take one set of roles are shown (SPEC §14.8):
/// the same for each of them, on every replica, and never a skill their
/// roles withhold. A map without roles has one lens, for everyone.
pub(crate) struct Lens {
    /// The roles taken (empty on a map without roles).
    pub(crate) roles: Vec<String>,
    /// The graph these roles see: the map without the skills withheld.
    pub(crate) graph: Arc<Graph>,
    /// The entry skill's prompt, as a run's start would give it.
    pub(crate) instructions: String,
    /// The one tool list of the sessionless generation (SPEC §9.2).
    pub(crate) stable: Vec<Tool>,
}

impl Lens {
    /// Whether these roles withhold nothing: only then is a run's record,
    /// which declares the whole map, theirs to read.
    pub(crate) fn hides_nothing(&self) -> bool {
        self.graph.withheld().is_empty()
    }

    /// Whether these roles see the skill `id`.
    pub(crate) fn shows(&self, id: &str) -> bool {
        !self.graph.withheld().iter().any(|withheld| withheld == id)
    }
}

/// What every run of one server shares: the graph, the upstream servers,
/// and what is the same for every request.
pub(crate) struct Hub {
    pub(crate) graph: Arc<Graph>,
    pub(crate) config: SessionConfig,
    pub(crate) upstreams: Arc<Upstreams>,
    /// The skills extension's entries and files (`skills/list`), of every
    /// skill a lens may show.
    pub(crate) files: SkillFiles,
    /// The number of the next connection.
    pub(crate) connections: AtomicU64,
    /// The record file of the one run over stdio, until that run starts.
    pub(crate) file: Mutex<Option<RecordWriter>>,
    /// Over HTTP, the runs held by handle; `None` over stdio.
    pub(crate) runs: Option<Runs>,
    /// Where each request's span goes (SPEC §11); `None`: export is off.
    pub(crate) tracing: Option<Tracing>,
    /// The shared store the sessionless runs are kept in (SPEC §14);
    /// `None`: they live in this process only.
    pub(crate) store: Option<Arc<Store>>,
    /// The roles a request with no principal holds: `--anonymous-role`'s,
    /// or none (it then takes `*`).
    anonymous: Vec<String>,
    /// Whether the map declares steps, so that `skip_step` is the
    /// session's own (SPEC §15.7).
    pub(crate) stepped: bool,
    /// The lenses made so far, one per set of roles taken.
    lenses: Mutex<Vec<Arc<Lens>>>,
    /// With a shared store, the handshake sessions served here, by id: the
    /// peer that tells a session's client its tool list changed, when
    /// another replica's step changed it (SPEC §14.6).
    peers: Mutex<HashMap<String, Peer<RoleServer>>>,
}

impl Hub {
    /// What the runs on `graph` set up by `config` share, proxying
    /// `upstreams`: over stdio with `runs` `None` and the record in `file`,
    /// over HTTP with the table of runs; each request a span for `tracing`
    /// when export is on. `anonymous` is what a request with no principal
    /// holds (`--anonymous-role`'s role, or none), when there are such
    /// requests (`None`: every request is authenticated).
    ///
    /// # Errors
    ///
    /// When a tool cannot be listed, or when the map has roles and a
    /// request with no principal would take none of them
    /// ([`ServeError::NoRole`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        graph: Arc<Graph>,
        files: SkillFiles,
        config: SessionConfig,
        upstreams: Arc<Upstreams>,
        file: Option<RecordWriter>,
        runs: Option<Runs>,
        tracing: Option<Tracing>,
        anonymous: Option<Vec<String>>,
    ) -> Result<Self, ServeError> {
        let stepped = graph
            .map()
            .skills
            .iter()
            .any(|skill| skill.steps.as_ref().is_some_and(|steps| !steps.is_empty()));
        let hub = Hub {
            stepped,
            graph,
            config,
            upstreams,
            files,
            connections: AtomicU64::new(0),
            file: Mutex::new(file),
            runs,
            tracing,
            store: None,
            anonymous: anonymous.clone().unwrap_or_default(),
            lenses: Mutex::default(),
            peers: Mutex::default(),
        };
        // Every tool of the whole map must be listable; and a request with
        // no principal must take a role, or be refused at start.
        if hub.graph.map().roles.is_empty() {
            // The one lens of a map without roles lists every tool: made
            // now, it is also the check.
            hub.lens_of(&[])?;
        } else {
            translate::stable_list(
                &hub.graph,
                &hub.config,
                hub.upstreams.tools(),
                hub.runs.is_some(),
            )?;
        }
        if anonymous.is_some() {
            hub.lens_of(&hub.anonymous)?;
        }
        Ok(hub)
    }

    /// The lens of a principal holding `held` (`None`: a request with no
    /// principal, which holds `--anonymous-role`'s role).
    ///
    /// # Errors
    ///
    /// [`ServeError::NoRole`] when the map declares roles, none of
    /// `held`, and no `*`.
    pub(crate) fn lens(&self, held: Option<&[String]>) -> Result<Arc<Lens>, ServeError> {
        self.lens_of(held.unwrap_or(&self.anonymous))
    }

    fn lens_of(&self, held: &[String]) -> Result<Arc<Lens>, ServeError> {
        let roles = roles_taken(&self.graph.map().roles, held).map_err(ServeError::NoRole)?;
        // A poisoned lock only loses the lenses made so far.
        let mut lenses = self
            .lenses
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(lens) = lenses.iter().find(|lens| lens.roles == roles) {
            return Ok(Arc::clone(lens));
        }
        let config = SessionConfig {
            roles: roles.clone(),
            ..self.config.clone()
        };
        let session = Session::with_config(Arc::clone(&self.graph), config.clone());
        let stable = translate::stable_list(
            &self.graph,
            &config,
            self.upstreams.tools(),
            self.runs.is_some(),
        )?;
        let lens = Arc::new(Lens {
            graph: Arc::clone(session.graph()),
            instructions: session.system_prompt(),
            stable,
            roles,
        });
        lenses.push(Arc::clone(&lens));
        Ok(lens)
    }

    /// The same, its sessionless runs kept in `store`.
    pub(crate) fn with_store(mut self, store: Option<Store>) -> Self {
        self.store = store.map(Arc::new);
        self
    }

    /// The run the shared store holds under `handle`, rebuilt in a slot of
    /// its own (not held in the table of runs): `None` without a store,
    /// when the store holds no such run, or when `principal` is given and
    /// the run is another's (`Some("")`: the anonymous principal's).
    ///
    /// # Errors
    ///
    /// When the store cannot be reached, or holds the run on another map
    /// or as no record this graph rebuilds.
    pub(crate) async fn stored_run(
        &self,
        handle: &str,
        principal: Option<&str>,
    ) -> Result<Option<Slot>, ErrorData> {
        let Some(store) = &self.store else {
            return Ok(None);
        };
        let loaded = store
            .load(handle)
            .await
            .map_err(|err| doorway::not_loaded(store, err))?;
        let Some(loaded) = loaded.filter(|loaded| principal.is_none_or(|p| loaded.principal == p))
        else {
            return Ok(None);
        };
        if loaded.map != store.map() {
            return Err(doorway::another_map(handle, &loaded.map, store.map()));
        }
        // The record says which roles the run took.
        let (slot, _) = self.new_run(&[])?;
        {
            let mut state = lock(&slot)?;
            state.kept = Some(Kept::new(
                Arc::clone(store),
                handle.to_owned(),
                loaded.principal.clone(),
            ));
            state.rebuild(Some(loaded))?;
        }
        Ok(Some(slot))
    }

    /// Remember `peer`, which serves the handshake session `id` here.
    pub(crate) fn remember_peer(&self, id: &str, peer: Peer<RoleServer>) {
        if self.store.is_some()
            && let Ok(mut peers) = self.peers.lock()
        {
            peers.insert(id.to_owned(), peer);
        }
    }

    /// Forget the peer of the session `id`, ended or asleep here.
    pub(crate) fn forget_peer(&self, id: &str) {
        if let Ok(mut peers) = self.peers.lock() {
            peers.remove(id);
        }
    }

    /// Tell the client of the session `id`, if it is served here, that its
    /// tool list changed.
    pub(crate) fn list_changed(&self, id: &str) {
        let peer = self
            .peers
            .lock()
            .ok()
            .and_then(|peers| peers.get(id).cloned());
        if let Some(peer) = peer {
            tokio::spawn(async move {
                let _ = peer.notify_tool_list_changed().await;
            });
        }
    }

    /// A run not started yet, taking `roles` (a [`Lens`]'s), with its
    /// record: over stdio in the record file, over HTTP in a file of its
    /// own in the records' folder.
    pub(crate) fn new_run(&self, roles: &[String]) -> Result<(Slot, Option<String>), ErrorData> {
        let (record, handle) = match &self.runs {
            Some(runs) => {
                let handle = mint_handle()?;
                (runs.record_for(&handle), Some(handle))
            }
            None => {
                let file = self.file.lock().ok().and_then(|mut file| file.take());
                (RecordSink::new(file), None)
            }
        };
        let config = SessionConfig {
            roles: roles.to_vec(),
            ..self.config.clone()
        };
        let state = State::new(Arc::clone(&self.graph), config, record);
        Ok((Arc::new(Mutex::new(state)), handle))
    }
}
