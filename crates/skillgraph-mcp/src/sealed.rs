//! State `serve` hands a client to return, sealed (SPEC §9.7): an
//! `input_required` answer's `requestState` carries the run it belongs to
//! (over HTTP) and the upstream's own state, under an HMAC-SHA-256 tag made
//! with a key of this server (made at start-up, or read from
//! `--state-key FILE` so that replicas share it). The tag covers what the
//! state is for (the method and the tool or prompt), so a state altered,
//! made by another server, or brought to another request is refused with
//! `-32602`, never acted on.
//!
//! A sealed state is `sg1.PAYLOAD.TAG`, both parts base64url without
//! padding; the payload is the JSON of [`Held`].

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit as _, Mac as _};
use rmcp::ErrorData;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// The first characters of every sealed state.
const PREFIX: &str = "sg1.";

/// How many bytes of key a server makes, and the fewest a `--state-key`
/// file may hold.
pub(crate) const KEY_BYTES: usize = 32;

/// The key states are sealed with, as an HMAC keyed once.
pub(crate) struct Sealer {
    mac: Hmac<Sha256>,
}

/// What a sealed state holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Held {
    /// The run the state belongs to, over HTTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) run: Option<String>,
    /// The upstream's own request state, given back to it on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) upstream: Option<String>,
}

/// The request a state was handed out for: a retry must be the same one.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Purpose<'a> {
    /// A `tools/call` of this tool.
    Tool(&'a str),
    /// A `prompts/get` of this prompt.
    Prompt(&'a str),
}

impl Purpose<'_> {
    /// The bytes the tag covers before the payload: the method, then the
    /// name, each ended by a zero byte.
    fn bytes(self) -> Vec<u8> {
        let (method, name) = match self {
            Purpose::Tool(name) => ("tools/call", name),
            Purpose::Prompt(name) => ("prompts/get", name),
        };
        let mut bytes = Vec::with_capacity(method.len() + name.len() + 2);
        bytes.extend_from_slice(method.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(0);
        bytes
    }
}

/// Why a state key could not be had.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyError {
    /// The operating system gave no random bytes.
    #[error("the system's random source failed: {0}")]
    Random(getrandom::Error),
    /// The key was refused by the HMAC (it takes keys of every length).
    #[error("the key cannot key an HMAC")]
    Refused,
    /// The `--state-key` file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The `--state-key` file holds too little.
    #[error("{path} holds {bytes} bytes; a state key needs at least {KEY_BYTES}")]
    Short {
        /// The file.
        path: String,
        /// How many bytes it holds (less its trailing line end).
        bytes: usize,
    },
}

impl Sealer {
    /// A sealer with a key of [`KEY_BYTES`] fresh random bytes.
    pub(crate) fn random() -> Result<Self, KeyError> {
        let mut key = vec![0u8; KEY_BYTES];
        getrandom::fill(&mut key).map_err(KeyError::Random)?;
        Sealer::keyed(&key)
    }

    /// A sealer with the key in the file at `path`: its bytes, less a
    /// trailing line end, at least [`KEY_BYTES`] of them.
    pub(crate) fn read(path: &Path) -> Result<Self, KeyError> {
        let shown = path.display().to_string();
        let mut key = std::fs::read(path).map_err(|source| KeyError::Read {
            path: shown.clone(),
            source,
        })?;
        while key.last().is_some_and(|byte| matches!(byte, b'\n' | b'\r')) {
            key.pop();
        }
        if key.len() < KEY_BYTES {
            return Err(KeyError::Short {
                path: shown,
                bytes: key.len(),
            });
        }
        Sealer::keyed(&key)
    }

    /// A sealer with `key`.
    fn keyed(key: &[u8]) -> Result<Self, KeyError> {
        let mac = <Hmac<Sha256>>::new_from_slice(key).map_err(|_| KeyError::Refused)?;
        Ok(Sealer { mac })
    }

    /// The tag of `payload` for `purpose`.
    fn mac(&self, purpose: Purpose<'_>, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = self.mac.clone();
        mac.update(&purpose.bytes());
        mac.update(payload);
        mac
    }

    /// `held`, sealed for `purpose`.
    pub(crate) fn seal(&self, purpose: Purpose<'_>, held: &Held) -> String {
        // A struct of strings always serializes.
        let payload = serde_json::to_vec(held).unwrap_or_default();
        let tag = self.mac(purpose, &payload).finalize().into_bytes();
        format!(
            "{PREFIX}{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// What `sealed` holds, when this server sealed it for `purpose`;
    /// `None` for any other text (compared in constant time).
    pub(crate) fn open(&self, purpose: Purpose<'_>, sealed: &str) -> Option<Held> {
        let (payload, tag) = sealed.strip_prefix(PREFIX)?.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        self.mac(purpose, &payload).verify_slice(&tag).ok()?;
        serde_json::from_slice(&payload).ok()
    }

    /// Open the `requestState` of a retry for `purpose` in place: it
    /// becomes the upstream's own state again, and the run it names is
    /// returned. No state: `Ok(None)`, nothing changed.
    ///
    /// # Errors
    ///
    /// `-32602` when the state is not one this server sealed for
    /// `purpose`: altered, made by another server, or for another request.
    pub(crate) fn reopen(
        &self,
        purpose: Purpose<'_>,
        state: &mut Option<String>,
    ) -> Result<Option<String>, ErrorData> {
        let Some(sealed) = state.as_deref() else {
            return Ok(None);
        };
        let Some(held) = self.open(purpose, sealed) else {
            return Err(ErrorData::invalid_params(
                "the requestState is not one this server gave for this request (it was altered, made by another server, or given for another request); send the request again without requestState and inputResponses to start over",
                None,
            ));
        };
        *state = held.upstream;
        Ok(held.run)
    }

    /// Seal the `requestState` of an `input_required` answer for `purpose`
    /// in place, with the `run` it belongs to; left out when there is
    /// neither a run nor a state of the upstream's.
    pub(crate) fn hold(&self, purpose: Purpose<'_>, run: Option<&str>, state: &mut Option<String>) {
        let held = Held {
            run: run.map(str::to_owned),
            upstream: state.take(),
        };
        if held != Held::default() {
            *state = Some(self.seal(purpose, &held));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealer() -> Sealer {
        Sealer::random().expect("random bytes")
    }

    #[test]
    fn a_sealed_state_opens_for_its_own_request_only() {
        let sealer = sealer();
        let held = Held {
            run: Some("run_0123".to_owned()),
            upstream: Some("opaque:with:colons".to_owned()),
        };
        let sealed = sealer.seal(Purpose::Tool("confirm"), &held);
        assert_eq!(sealer.open(Purpose::Tool("confirm"), &sealed), Some(held));
        assert_eq!(sealer.open(Purpose::Tool("other"), &sealed), None);
        assert_eq!(sealer.open(Purpose::Prompt("confirm"), &sealed), None);
        assert_eq!(sealer.open(Purpose::Tool("confirm"), "opaque"), None);
    }

    #[test]
    fn an_altered_or_foreign_state_is_refused() {
        let sealer = sealer();
        let mut state = Some("upstream's".to_owned());
        sealer.hold(Purpose::Tool("confirm"), Some("run_1"), &mut state);
        let sealed = state.expect("a sealed state");
        let mut tampered = Some(format!("{sealed}-TAMPERED"));
        let refused = sealer
            .reopen(Purpose::Tool("confirm"), &mut tampered)
            .expect_err("refused");
        assert_eq!(refused.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        let mut foreign = Some(sealed.clone());
        assert!(
            Sealer::random()
                .expect("random bytes")
                .reopen(Purpose::Tool("confirm"), &mut foreign)
                .is_err()
        );
        let mut given = Some(sealed);
        assert_eq!(
            sealer.reopen(Purpose::Tool("confirm"), &mut given),
            Ok(Some("run_1".to_owned()))
        );
        assert_eq!(given.as_deref(), Some("upstream's"));
    }

    #[test]
    fn nothing_to_hold_is_no_state() {
        let sealer = sealer();
        let mut state = None;
        sealer.hold(Purpose::Prompt("p"), None, &mut state);
        assert_eq!(state, None);
        assert_eq!(sealer.reopen(Purpose::Prompt("p"), &mut state), Ok(None));
    }

    #[test]
    fn a_key_file_needs_enough_bytes() {
        let dir = std::env::temp_dir().join(format!("sealed-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let short = dir.join("short");
        std::fs::write(&short, "too short\n").expect("written");
        assert!(matches!(
            Sealer::read(&short),
            Err(KeyError::Short { bytes: 9, .. })
        ));
        let long = dir.join("long");
        std::fs::write(&long, format!("{}\n", "k".repeat(KEY_BYTES))).expect("written");
        let one = Sealer::read(&long).expect("a key");
        let two = Sealer::read(&long).expect("a key");
        let sealed = one.seal(Purpose::Prompt("p"), &Held::default());
        assert!(two.open(Purpose::Prompt("p"), &sealed).is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
