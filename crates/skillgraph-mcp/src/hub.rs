//! What every run of one server shares (SPEC §9): the graph and its
//! session settings, the upstream servers, the instructions, the skills
//! extension's files, the one stable list of the sessionless generation,
//! and where runs are kept; and a new run, with its record, made here.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use rmcp::model::Tool;
use rmcp::service::Peer;
use rmcp::{ErrorData, RoleServer};
use skillgraph::RecordWriter;
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

/// What every run of one server shares: the graph, the upstream servers,
/// and what is the same for every request.
pub(crate) struct Hub {
    pub(crate) graph: Arc<Graph>,
    pub(crate) config: SessionConfig,
    pub(crate) upstreams: Arc<Upstreams>,
    pub(crate) instructions: String,
    /// The skills extension's entries and files (`skills/list`).
    pub(crate) files: SkillFiles,
    /// The one tool list of the sessionless generation (SPEC §9.2).
    pub(crate) stable: Vec<Tool>,
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
    /// With a shared store, the handshake sessions served here, by id: the
    /// peer that tells a session's client its tool list changed, when
    /// another replica's step changed it (SPEC §14.6).
    peers: Mutex<HashMap<String, Peer<RoleServer>>>,
}

impl Hub {
    /// What the runs on `graph` set up by `config` share, proxying
    /// `upstreams`: over stdio with `runs` `None` and the record in `file`,
    /// over HTTP with the table of runs; each request a span for `tracing`
    /// when export is on.
    pub(crate) fn new(
        graph: Arc<Graph>,
        files: SkillFiles,
        config: SessionConfig,
        upstreams: Arc<Upstreams>,
        file: Option<RecordWriter>,
        runs: Option<Runs>,
        tracing: Option<Tracing>,
    ) -> Result<Self, ServeError> {
        // The entry skill's prompt, as a run's start would give it.
        let instructions = Session::with_config(Arc::clone(&graph), config.clone()).system_prompt();
        let stable = translate::stable_list(&graph, &config, upstreams.tools(), runs.is_some())?;
        Ok(Hub {
            graph,
            config,
            upstreams,
            instructions,
            files,
            stable,
            connections: AtomicU64::new(0),
            file: Mutex::new(file),
            runs,
            tracing,
            store: None,
            peers: Mutex::default(),
        })
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
        let (slot, _) = self.new_run()?;
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

    /// A run not started yet, with its record: over stdio in the record
    /// file, over HTTP in a file of its own in the records' folder.
    pub(crate) fn new_run(&self) -> Result<(Slot, Option<String>), ErrorData> {
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
        let state = State::new(Arc::clone(&self.graph), self.config.clone(), record);
        Ok((Arc::new(Mutex::new(state)), handle))
    }
}
