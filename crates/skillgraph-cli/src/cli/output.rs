//! The one path every command prints through. Standard output is written
//! whole, and a reader that went away (a closed pipe, as in `skillgraph
//! tools DIR | head`) ends the printing quietly: the command finishes and
//! exits as it would have. Standard error takes warnings and the final
//! error line the same way: a line nobody can read is lost, never a panic.

use std::io::{ErrorKind, Write};

use super::Failure;

/// Write `text` to standard output, flushed. A closed pipe is no failure:
/// the text is dropped, and so is every later write.
pub(crate) fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(err) => Err(Failure::output(format!(
            "cannot write to standard output: {err}"
        ))),
    }
}

/// [`print`] `text` and a line break.
pub(crate) fn print_line(text: &str) -> Result<(), Failure> {
    print(&format!("{text}\n"))
}

/// `value` as pretty JSON and a line break, through [`print`].
pub(crate) fn print_json(value: &impl serde::Serialize) -> Result<(), Failure> {
    print_line(&to_json(value)?)
}

/// `value` as pretty JSON.
pub(crate) fn to_json(value: &impl serde::Serialize) -> Result<String, Failure> {
    serde_json::to_string_pretty(value)
        .map_err(|err| Failure::output(format!("cannot write the output as JSON: {err}")))
}

/// A line on standard error; lost, never a panic, when nobody reads it.
pub(crate) fn warn(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
