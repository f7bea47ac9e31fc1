//! The client's side of standard input and output as an rmcp transport:
//! one JSON-RPC message a line, with every line answered (SPEC §9.7). A
//! line that is not JSON gets `-32700`; JSON that is no JSON-RPC message
//! gets `-32600` with its id when the id can be read, and so does a request
//! whose id is too long to repeat (with a `null` id); a known method whose
//! params do not fit it gets `-32602`; several messages on one line are
//! each taken. No answer repeats more than [`MAX_ECHO`] characters of the
//! client's input.

use std::collections::VecDeque;
use std::sync::Arc;

use rmcp::model::{ClientRequest, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::echo::MAX_ECHO;
use crate::echo::cut;
use crate::malformed::refusal;

/// The longest line read; a longer one is answered `-32600` and skipped.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// JSON-RPC's code for input that is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a request this server takes.
const INVALID_REQUEST: i64 = -32600;

/// Standard input and output, one message a line.
pub(crate) struct ClientLines<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// How many lines have been read, for the answers that name one.
    number: u64,
    /// Messages read and not yet handed to rmcp (a line may hold several).
    ready: VecDeque<RxJsonRpcMessage<RoleServer>>,
    write: Arc<Mutex<Option<W>>>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> ClientLines<R, W> {
    /// Read messages from `read` and write them to `write`.
    pub(crate) fn new(read: R, write: W) -> Self {
        ClientLines {
            read: BufReader::new(read),
            line: Vec::new(),
            number: 0,
            ready: VecDeque::new(),
            write: Arc::new(Mutex::new(Some(write))),
        }
    }
}

/// Write one line to `write`, flushed.
async fn write_line<W: AsyncWrite + Unpin>(
    write: &Mutex<Option<W>>,
    mut line: Vec<u8>,
) -> std::io::Result<()> {
    line.push(b'\n');
    let mut guard = write.lock().await;
    let Some(out) = guard.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the connection is closed",
        ));
    };
    out.write_all(&line).await?;
    out.flush().await
}

/// What one line holds: the messages to take, and the error answers owed.
#[derive(Debug, Default)]
struct Parsed {
    messages: Vec<RxJsonRpcMessage<RoleServer>>,
    answers: Vec<Value>,
}

impl Parsed {
    /// Take `message`, read from line `number`, unless it is a request
    /// this transport answers itself: one whose id is too long to repeat,
    /// or one rmcp could not type for a known method or a method name too
    /// long to repeat (see [`refusal`]).
    fn take(&mut self, message: RxJsonRpcMessage<RoleServer>, number: u64) {
        let JsonRpcMessage::Request(request) = &message else {
            self.messages.push(message);
            return;
        };
        if let RequestId::String(id) = &request.id
            && id.chars().count() > MAX_ECHO
        {
            self.answers.push(error_answer(
                Value::Null,
                INVALID_REQUEST,
                &format!(
                    "line {number} is a request whose id is a string of {} bytes, too long to repeat in its answer; send an id of at most {MAX_ECHO} characters",
                    id.len()
                ),
            ));
            return;
        }
        let refused = match &request.request {
            ClientRequest::CustomRequest(custom) => refusal(custom),
            _ => None,
        };
        match refused {
            Some(error) => self.answers.push(refused_answer(&request.id, error)),
            None => self.messages.push(message),
        }
    }
}

/// The answer to the request `id` that `error` refuses.
fn refused_answer(id: &RequestId, error: ErrorData) -> Value {
    let id = serde_json::to_value(id).unwrap_or(Value::Null);
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

/// Read one line's messages (SPEC §9.7).
fn parse_line(line: &[u8], number: u64) -> Parsed {
    let mut parsed = Parsed::default();
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return parsed;
    }
    // The common case: one message, parsed once.
    if let Ok(message) = serde_json::from_slice(line) {
        parsed.take(message, number);
        return parsed;
    }
    for value in serde_json::Deserializer::from_slice(line).into_iter::<Value>() {
        match value {
            Ok(value) => take_value(value, number, &mut parsed),
            Err(err) => {
                parsed.answers.push(error_answer(
                    Value::Null,
                    PARSE_ERROR,
                    &format!(
                        "line {number} is not JSON ({}, at column {}); send one JSON-RPC message a line",
                        category(&err),
                        err.column()
                    ),
                ));
                break;
            }
        }
    }
    parsed
}

/// One JSON value of a line: a message, or an error answer when it is a
/// request rmcp cannot take. A notification that is not one is dropped, as
/// JSON-RPC forbids answering a notification.
fn take_value(value: Value, number: u64, parsed: &mut Parsed) {
    let id = value.get("id").cloned();
    let is_notification = value.is_object() && id.is_none() && value.get("method").is_some();
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
        Ok(message) => parsed.take(message, number),
        Err(_) if is_notification => {}
        Err(err) => parsed.answers.push(error_answer(
            readable_id(id),
            INVALID_REQUEST,
            &format!(
                "line {number} is JSON but not a JSON-RPC request this server takes ({}); send {{\"jsonrpc\": \"2.0\", \"id\": …, \"method\": …, \"params\": …}}",
                cut(&err.to_string())
            ),
        )),
    }
}

/// The id to answer with: the request's, when it is a number or a string
/// short enough to repeat; else `null`.
fn readable_id(id: Option<Value>) -> Value {
    match id {
        Some(Value::Number(number)) => Value::Number(number),
        Some(Value::String(text)) if text.chars().count() <= MAX_ECHO => Value::String(text),
        _ => Value::Null,
    }
}

fn category(err: &serde_json::Error) -> &'static str {
    match err.classify() {
        serde_json::error::Category::Eof => "it ends too early",
        _ => "a syntax error",
    }
}

fn error_answer(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

impl<R, W> Transport<RoleServer> for ClientLines<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        async move {
            let line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            write_line(&write, line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if let Some(message) = self.ready.pop_front() {
                return Some(message);
            }
            // A cancelled read (rmcp polls this in a `select!`) leaves its
            // partial line in `self.line`, and the next call goes on with it.
            let read = (&mut self.read)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut self.line)
                .await;
            match read {
                Ok(0) if self.line.is_empty() => return None,
                Ok(_) => {}
                Err(_) => return None,
            }
            self.number += 1;
            let line = std::mem::take(&mut self.line);
            let answers = if line.len() > MAX_LINE {
                self.skip_rest_of_line().await;
                vec![error_answer(
                    Value::Null,
                    INVALID_REQUEST,
                    &format!(
                        "line {} is longer than {MAX_LINE} bytes, so it was not read; send smaller messages",
                        self.number
                    ),
                )]
            } else {
                let body = line.strip_suffix(b"\n").unwrap_or(&line);
                let body = body.strip_suffix(b"\r").unwrap_or(body);
                let parsed = parse_line(body, self.number);
                self.ready.extend(parsed.messages);
                parsed.answers
            };
            for answer in answers {
                let Ok(bytes) = serde_json::to_vec(&answer) else {
                    continue;
                };
                if write_line(&self.write, bytes).await.is_err() {
                    return None;
                }
            }
            self.line = line;
            self.line.clear();
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut guard = self.write.lock().await;
        if let Some(mut out) = guard.take() {
            out.shutdown().await?;
        }
        Ok(())
    }
}

impl<R: AsyncRead + Unpin, W> ClientLines<R, W> {
    /// Drop what is left of an oversized line, up to its line break.
    async fn skip_rest_of_line(&mut self) {
        let mut rest = Vec::new();
        loop {
            rest.clear();
            match (&mut self.read)
                .take(64 * 1024)
                .read_until(b'\n', &mut rest)
                .await
            {
                Ok(0) | Err(_) => return,
                Ok(_) if rest.ends_with(b"\n") => return,
                Ok(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(line: &str) -> (usize, Vec<Value>) {
        let parsed = parse_line(line.as_bytes(), 3);
        (parsed.messages.len(), parsed.answers)
    }

    #[test]
    fn a_line_that_is_not_json_is_answered_as_a_parse_error() {
        let (messages, answers) = read("this is not JSON");
        assert_eq!(messages, 0);
        assert_eq!(answers[0]["error"]["code"], -32700);
        assert_eq!(answers[0]["id"], Value::Null);
        assert!(
            answers[0]["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("line 3 is not JSON"))
        );
    }

    #[test]
    fn an_invalid_request_is_answered_with_its_id() {
        let (_, answers) = read(r#"{"jsonrpc": "2.0", "id": 7, "method": 12}"#);
        assert_eq!(
            (
                answers[0]["id"].clone(),
                answers[0]["error"]["code"].clone()
            ),
            (json!(7), json!(-32600))
        );
        let long = "x".repeat(5_000_000);
        let (_, answers) = read(&format!(
            r#"{{"jsonrpc": "2.0", "id": "{long}", "method": 12}}"#
        ));
        assert_eq!(answers[0]["id"], Value::Null, "a long id is not repeated");
        assert!(
            answers[0].to_string().len() < 1_000,
            "nothing long is echoed"
        );
    }

    #[test]
    fn a_known_method_with_malformed_params_is_answered_invalid_params() {
        let (messages, answers) =
            read(r#"{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": 42}}"#);
        assert_eq!(messages, 0);
        assert_eq!(
            (
                answers[0]["id"].clone(),
                answers[0]["error"]["code"].clone()
            ),
            (json!(9), json!(-32602))
        );
        let (messages, answers) =
            read(r#"{"jsonrpc": "2.0", "id": 9, "method": "vendor/thing", "params": {}}"#);
        assert_eq!(
            (messages, answers.len()),
            (1, 0),
            "an unknown method is the handler's to answer"
        );
    }

    #[test]
    fn a_request_whose_id_is_too_long_to_repeat_is_invalid() {
        let long = "i".repeat(MAX_ECHO + 1);
        let (messages, answers) = read(&format!(
            r#"{{"jsonrpc": "2.0", "id": "{long}", "method": "ping"}}"#
        ));
        assert_eq!(messages, 0);
        assert_eq!(answers[0]["id"], Value::Null);
        assert_eq!(answers[0]["error"]["code"], -32600);
        let (messages, _) = read(&format!(
            r#"{{"jsonrpc": "2.0", "id": "{}", "method": "ping"}}"#,
            &long[1..]
        ));
        assert_eq!(messages, 1, "an id of {MAX_ECHO} characters is taken");
    }

    #[test]
    fn two_messages_on_one_line_are_both_taken() {
        let ping = r#"{"jsonrpc": "2.0", "id": 1, "method": "ping"}"#;
        let (messages, answers) = read(&format!("{ping}{ping}"));
        assert_eq!((messages, answers.len()), (2, 0));
        let (messages, answers) = read(&format!("{ping} {{broken"));
        assert_eq!((messages, answers.len()), (1, 1));
    }

    #[test]
    fn a_notification_that_is_not_one_gets_no_answer() {
        let (messages, answers) =
            read(r#"{"jsonrpc": "2.0", "method": "lsp/whatever", "params": 3}"#);
        assert_eq!((messages, answers.len()), (0, 0));
        assert_eq!(answers.len(), 0);
        let (messages, answers) = read("   ");
        assert_eq!((messages, answers.len()), (0, 0));
    }
}
