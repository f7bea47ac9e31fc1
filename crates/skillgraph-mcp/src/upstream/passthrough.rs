//! What the upstreams offer besides tools, passed through unchanged in
//! meaning (SPEC §9.5): resources, resource templates, prompts and
//! completions are listed from every upstream that declares them, and each
//! read, get or completion goes to the upstream that offers it; resource
//! subscriptions and log levels are relayed. An upstream is known to offer a
//! resource once a list or a tool result (a `resource_link`, an embedded
//! resource) has named it; a URI no list named goes to the upstream whose
//! template matches it, else to each resource server in turn.

// Resource subscriptions and log levels are deprecated by a revision after
// 2026-07-28 (SEP-2577) and are what the handshake generation uses.
#![allow(deprecated)]

use rmcp::ErrorData;
use std::collections::HashMap;

use rmcp::model::{
    CallToolResult, ClientCapabilities, ClientRequest, CompleteRequestParams, CompleteResult,
    ContentBlock, GetPromptRequest, GetPromptRequestParams, GetPromptResponse, Prompt,
    ReadResourceRequestParams, ReadResourceResult, Reference, Resource, ResourceContents,
    ResourceTemplate, ResultType, ServerCapabilities, ServerResult, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};

use super::{Upstream, Upstreams};
use crate::echo::{bounded, cut, shown};
use crate::relay::Caller;
use crate::runs::Generation;
use crate::sealed::Purpose;

/// The most resource URIs remembered with their upstream; past it, a URI
/// is found by the upstreams' templates, or by asking each in turn.
const MAX_REMEMBERED: usize = 10_000;

/// A failed relay as the client's MCP error, naming the upstream: the
/// upstream's own error with its message cut to the echo bound (it may
/// quote the request), or what went wrong.
fn relay_error(upstream: &Upstream, what: &str, error: ServiceError) -> ErrorData {
    match error {
        ServiceError::McpError(error) => bounded(error),
        other => ErrorData::internal_error(
            format!(
                "upstream server \"{}\" could not answer {what}: {}",
                upstream.name,
                cut(&other.to_string())
            ),
            None,
        ),
    }
}

impl Upstream {
    /// `request` of this upstream, answered within `timeout`, its failure
    /// as the client's MCP error naming the upstream and `what`.
    async fn within<T>(
        &self,
        timeout: std::time::Duration,
        what: &str,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, ErrorData> {
        match tokio::time::timeout(timeout, request).await {
            Ok(answer) => answer.map_err(|err| relay_error(self, what, err)),
            Err(_) => Err(ErrorData::internal_error(
                format!(
                    "upstream server \"{}\" did not answer {what} within {} s; raise `--upstream-timeout` if it needs longer",
                    self.name,
                    timeout.as_secs()
                ),
                None,
            )),
        }
    }
}

/// A list one upstream could not give, said on standard error: the list
/// goes on with the other upstreams' entries.
fn skipped(error: &ErrorData) {
    crate::warn(&format!("{}; the list is given without it", error.message));
}

/// Whether `uri` is one `template` (RFC 6570) can make: the literal text
/// before its first expression starts `uri`.
fn template_covers(template: &str, uri: &str) -> bool {
    let literal = template.split('{').next().unwrap_or(template);
    !literal.is_empty() && uri.starts_with(literal)
}

impl Upstreams {
    /// The upstreams that declared what `offers` asks for (on their first
    /// link: a server declares the same on each).
    fn offering(
        &self,
        offers: impl Fn(&ServerCapabilities) -> bool,
    ) -> impl Iterator<Item = (usize, &Upstream)> {
        self.servers
            .iter()
            .enumerate()
            .filter(move |(_, upstream)| {
                upstream
                    .primary
                    .peer()
                    .peer_info()
                    .is_some_and(|info| offers(&info.capabilities))
            })
    }

    /// Whether any upstream declared what `offers` asks for.
    pub(crate) fn any_offers(&self, offers: impl Fn(&ServerCapabilities) -> bool) -> bool {
        self.offering(offers).next().is_some()
    }

    /// The first capability `pick` finds among the upstreams' declarations.
    pub(crate) fn first_capability<T>(
        &self,
        pick: impl Fn(&ServerCapabilities) -> Option<T>,
    ) -> Option<T> {
        self.servers.iter().find_map(|upstream| {
            upstream
                .primary
                .peer()
                .peer_info()
                .and_then(|info| pick(&info.capabilities))
        })
    }

    fn remember_uri(&self, uri: &str, index: usize) {
        if let Ok(mut owners) = self.uri_owners.lock()
            && (owners.len() < MAX_REMEMBERED || owners.contains_key(uri))
        {
            owners.entry(uri.to_owned()).or_insert(index);
        }
    }

    /// Remember the resources a tool result of `tool` names, so that a
    /// client can read them through `serve`.
    pub(crate) fn remember_result(&self, tool: &str, result: &CallToolResult) {
        let Some((index, _)) = self.tools.get(tool) else {
            return;
        };
        for block in &result.content {
            match block {
                ContentBlock::ResourceLink(link) => self.remember_uri(&link.uri, *index),
                ContentBlock::Resource(embedded) => match &embedded.resource {
                    ResourceContents::TextResourceContents { uri, .. }
                    | ResourceContents::BlobResourceContents { uri, .. } => {
                        self.remember_uri(uri, *index);
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }

    /// The prompt names and resource URIs two upstreams both offer, each as
    /// (what, the name or URI, the two servers), listed once at start-up
    /// (SPEC §9.5: refused, naming both). An upstream whose list fails here
    /// is left to fail its own requests later.
    pub(crate) async fn passthrough_clashes(&self) -> Vec<(&'static str, String, [String; 2])> {
        // Each server's first link: no other is opened for this.
        let generation = Generation::Sessionless;
        let mut clashes = Vec::new();
        let mut prompts: HashMap<String, usize> = HashMap::new();
        for (index, upstream) in self.offering(|c| c.prompts.is_some()) {
            let listed = upstream.within(
                self.timeout,
                "prompts/list",
                upstream.link(generation).await.peer().list_all_prompts(),
            );
            let Ok(listed) = listed.await else {
                continue;
            };
            for prompt in listed {
                if let Some(&other) = prompts.get(&prompt.name) {
                    let servers = [self.servers[other].name.clone(), upstream.name.clone()];
                    clashes.push(("prompt", prompt.name, servers));
                } else {
                    prompts.insert(prompt.name, index);
                }
            }
        }
        let mut uris: HashMap<String, usize> = HashMap::new();
        for (index, upstream) in self.offering(|c| c.resources.is_some()) {
            let listed = upstream.within(
                self.timeout,
                "resources/list",
                upstream.link(generation).await.peer().list_all_resources(),
            );
            let Ok(listed) = listed.await else {
                continue;
            };
            for resource in listed {
                if let Some(&other) = uris.get(&resource.uri) {
                    let servers = [self.servers[other].name.clone(), upstream.name.clone()];
                    clashes.push(("resource", resource.uri.clone(), servers));
                } else {
                    uris.insert(resource.uri.clone(), index);
                }
            }
        }
        clashes
    }

    /// What `list` gives of each upstream that declared what `offers`
    /// asks for, on its link for clients of `generation`, by server index;
    /// an upstream that fails `what` is skipped, saying so on standard
    /// error.
    async fn gather<T, Listed>(
        &self,
        generation: Generation,
        what: &str,
        offers: impl Fn(&ServerCapabilities) -> bool,
        list: impl Fn(Peer<RoleClient>) -> Listed,
    ) -> Vec<(usize, Vec<T>)>
    where
        Listed: Future<Output = Result<Vec<T>, ServiceError>>,
    {
        let mut all = Vec::new();
        for (index, upstream) in self.offering(offers) {
            let peer = upstream.link(generation).await.peer().clone();
            match upstream.within(self.timeout, what, list(peer)).await {
                Ok(listed) => all.push((index, listed)),
                Err(error) => skipped(&error),
            }
        }
        all
    }

    /// Every upstream's resources; an upstream that fails is skipped,
    /// saying so on standard error.
    pub(crate) async fn list_resources(&self, generation: Generation) -> Vec<Resource> {
        let listed = self
            .gather(
                generation,
                "resources/list",
                |c| c.resources.is_some(),
                |peer| async move { peer.list_all_resources().await },
            )
            .await;
        let mut all = Vec::new();
        for (index, resources) in listed {
            for resource in &resources {
                self.remember_uri(&resource.uri, index);
            }
            all.extend(resources);
        }
        all
    }

    /// Every upstream's resource templates; an upstream that fails is
    /// skipped, saying so on standard error.
    pub(crate) async fn list_resource_templates(
        &self,
        generation: Generation,
    ) -> Vec<ResourceTemplate> {
        self.gather(
            generation,
            "resources/templates/list",
            |c| c.resources.is_some(),
            |peer| async move { peer.list_all_resource_templates().await },
        )
        .await
        .into_iter()
        .flat_map(|(_, templates)| templates)
        .collect()
    }

    /// The upstream to ask for `uri`: the one a list or a result named it
    /// for, else the one whose template covers it.
    async fn owner_of_uri(&self, uri: &str, generation: Generation) -> Option<usize> {
        if let Some(index) = self
            .uri_owners
            .lock()
            .ok()
            .and_then(|owners| owners.get(uri).copied())
        {
            return Some(index);
        }
        let index = self
            .template_owner(generation, |template| template_covers(template, uri))
            .await?;
        self.remember_uri(uri, index);
        Some(index)
    }

    /// The first resource server one of whose templates `fits`.
    async fn template_owner(
        &self,
        generation: Generation,
        fits: impl Fn(&str) -> bool,
    ) -> Option<usize> {
        for (index, upstream) in self.offering(|c| c.resources.is_some()) {
            let templates = upstream.within(
                self.timeout,
                "resources/templates/list",
                upstream
                    .link(generation)
                    .await
                    .peer()
                    .list_all_resource_templates(),
            );
            if let Ok(templates) = templates.await
                && templates.iter().any(|t| fits(&t.uri_template))
            {
                return Some(index);
            }
        }
        None
    }

    /// Read `uri` from the upstream that offers it; `None` when no upstream
    /// declares resources.
    pub(crate) async fn read_resource(
        &self,
        params: ReadResourceRequestParams,
        generation: Generation,
    ) -> Option<Result<ReadResourceResult, ErrorData>> {
        let candidates: Vec<usize> = match self.owner_of_uri(&params.uri, generation).await {
            Some(index) => vec![index],
            None => self
                .offering(|c| c.resources.is_some())
                .map(|(index, _)| index)
                .collect(),
        };
        let mut last = None;
        for index in candidates {
            let upstream = &self.servers[index];
            let read = upstream.within(
                self.timeout,
                "resources/read",
                upstream
                    .link(generation)
                    .await
                    .peer()
                    .read_resource(params.clone()),
            );
            match read.await {
                Ok(mut result) => {
                    self.remember_uri(&params.uri, index);
                    result.result_type.get_or_insert(ResultType::COMPLETE);
                    return Some(Ok(result));
                }
                Err(err) => last = Some(err),
            }
        }
        last.map(Err)
    }

    /// Every upstream's prompts; an upstream that fails is skipped, saying
    /// so on standard error.
    pub(crate) async fn list_prompts(&self, generation: Generation) -> Vec<Prompt> {
        let listed = self
            .gather(
                generation,
                "prompts/list",
                |c| c.prompts.is_some(),
                |peer| async move { peer.list_all_prompts().await },
            )
            .await;
        let mut all = Vec::new();
        for (index, prompts) in listed {
            if let Ok(mut owners) = self.prompt_owners.lock() {
                for prompt in &prompts {
                    owners.entry(prompt.name.clone()).or_insert(index);
                }
            }
            all.extend(prompts);
        }
        all
    }

    /// The upstream that offers the prompt `name`.
    async fn owner_of_prompt(&self, name: &str, generation: Generation) -> Option<usize> {
        let known = |upstreams: &Self| {
            upstreams
                .prompt_owners
                .lock()
                .ok()
                .and_then(|owners| owners.get(name).copied())
        };
        if let Some(index) = known(self) {
            return Some(index);
        }
        let _ = self.list_prompts(generation).await;
        known(self)
    }

    /// Get the prompt from the upstream that offers it, for a client of
    /// `generation` that declared `capabilities` with the request (the
    /// sessionless generation's way). An upstream that asks for input first
    /// (`input_required`) is relayed (SPEC §9.5): its state sealed, and the
    /// client's retry opened again (SPEC §9.7).
    ///
    /// # Errors
    ///
    /// `-32602` for an unknown prompt or a request state serve did not seal
    /// for it; `-32021` when the upstream needs a capability the client did
    /// not declare; the upstream's own error, or its failure to answer.
    pub(crate) async fn get_prompt(
        &self,
        mut params: GetPromptRequestParams,
        generation: Generation,
        capabilities: Option<ClientCapabilities>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some(index) = self.owner_of_prompt(&params.name, generation).await else {
            return Err(ErrorData::invalid_params(
                format!(
                    "no upstream server offers a prompt named {}; prompts/list names the prompts there are",
                    shown(&params.name)
                ),
                None,
            ));
        };
        let name = params.name.clone();
        let purpose = Purpose::Prompt(&name);
        self.sealer.reopen(purpose, &mut params.request_state)?;
        let upstream = &self.servers[index];
        let link = upstream.link(generation).await;
        let mut options = PeerRequestOptions::no_options();
        options.meta =
            super::forwarded_meta(params.meta.take(), capabilities.clone(), link.sessionless());
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        let answer = upstream
            .within(self.timeout, "prompts/get", async {
                link.peer()
                    .send_request_with_option(request, options)
                    .await?
                    .await_response()
                    .await
            })
            .await?;
        match answer {
            ServerResult::GetPromptResult(mut result) => {
                result.result_type.get_or_insert(ResultType::COMPLETE);
                Ok(GetPromptResponse::Complete(result))
            }
            ServerResult::InputRequiredResult(mut asked) => {
                let missing = crate::capability::undeclared(
                    asked.input_requests.as_ref(),
                    capabilities.as_ref(),
                );
                if generation == Generation::Sessionless && !missing.is_empty() {
                    return Err(crate::capability::refusal_of(&upstream.name, &missing));
                }
                self.sealer.hold(purpose, None, &mut asked.request_state);
                Ok(GetPromptResponse::InputRequired(asked))
            }
            _ => Err(ErrorData::internal_error(
                format!(
                    "upstream server \"{}\" answered prompts/get with a result that is not a prompt",
                    upstream.name
                ),
                None,
            )),
        }
    }

    /// A completion, from the upstream that offers the prompt or template
    /// it is for.
    pub(crate) async fn complete(
        &self,
        params: CompleteRequestParams,
        generation: Generation,
    ) -> Result<CompleteResult, ErrorData> {
        let owner = match &params.r#ref {
            Reference::Prompt(prompt) => self.owner_of_prompt(&prompt.name, generation).await,
            Reference::Resource(template) => {
                self.template_owner(generation, |uri_template| uri_template == template.uri)
                    .await
            }
            _ => None,
        };
        let Some(index) = owner else {
            let mut nothing = CompleteResult::default();
            nothing.result_type = Some(ResultType::COMPLETE);
            return Ok(nothing);
        };
        let upstream = &self.servers[index];
        upstream
            .within(
                self.timeout,
                "completion/complete",
                upstream.link(generation).await.peer().complete(params),
            )
            .await
            .map(|mut result| {
                result.result_type.get_or_insert(ResultType::COMPLETE);
                result
            })
    }

    /// Subscribe `caller`'s client to `uri` at the upstream that offers it:
    /// its updates go to the clients subscribed to it.
    pub(crate) async fn subscribe(
        &self,
        params: SubscribeRequestParams,
        caller: &Caller,
        generation: Generation,
    ) -> Result<(), ErrorData> {
        let Some(index) = self.owner_of_uri(&params.uri, generation).await else {
            return Err(ErrorData::resource_not_found(
                format!(
                    "no upstream server offers {}; resources/list names the resources there are",
                    shown(&params.uri)
                ),
                None,
            ));
        };
        let upstream = &self.servers[index];
        let uri = params.uri.clone();
        upstream
            .within(
                self.timeout,
                "resources/subscribe",
                upstream.link(generation).await.peer().subscribe(params),
            )
            .await?;
        self.relay.subscribe(&uri, caller);
        Ok(())
    }

    /// Unsubscribe the client of connection `connection` from `uri`; the
    /// upstream that offers it is told when no client is subscribed any
    /// more.
    pub(crate) async fn unsubscribe(
        &self,
        params: UnsubscribeRequestParams,
        connection: u64,
        generation: Generation,
    ) -> Result<(), ErrorData> {
        if !self.relay.unsubscribe(&params.uri, connection) {
            return Ok(());
        }
        let Some(index) = self.owner_of_uri(&params.uri, generation).await else {
            return Ok(());
        };
        let upstream = &self.servers[index];
        upstream
            .within(
                self.timeout,
                "resources/unsubscribe",
                upstream.link(generation).await.peer().unsubscribe(params),
            )
            .await
    }

    /// Set the log level at every upstream that logs; one that fails is
    /// said on standard error and the others are still set. The level is
    /// the upstream's, for every client of the generation (MCP has one
    /// level per connection).
    pub(crate) async fn set_level(
        &self,
        params: SetLevelRequestParams,
        generation: Generation,
    ) -> Result<(), ErrorData> {
        for (_, upstream) in self.offering(|c| c.logging.is_some()) {
            let set = upstream.within(
                self.timeout,
                "logging/setLevel",
                upstream
                    .link(generation)
                    .await
                    .peer()
                    .set_level(params.clone()),
            );
            if let Err(error) = set.await {
                crate::warn(&format!(
                    "{}; the other upstreams' levels are set",
                    error.message
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::template_covers;

    #[test]
    fn a_template_covers_the_uris_that_start_with_its_literal_text() {
        assert!(template_covers("demo://resource/{id}", "demo://resource/7"));
        assert!(!template_covers("demo://resource/{id}", "other://x"));
        assert!(
            !template_covers("{scheme}://x", "demo://x"),
            "no literal text covers nothing"
        );
    }
}
