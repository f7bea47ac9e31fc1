//! A real Redis for the run store's tests (SPEC §14): Debian's
//! `redis-server`, started by the test on a free loopback port in a folder
//! of its own, never the system's service, and stopped with the test.
//! `cargo xtask ci` installs the package when it is missing.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `redis-server` of this test's own.
pub struct Redis {
    /// Its port on 127.0.0.1.
    pub port: u16,
    dir: PathBuf,
    settings: Vec<String>,
    child: Option<Child>,
}

impl Redis {
    /// A store as `docs/deploy.md` asks for one: `appendonly yes`,
    /// `appendfsync everysec`, `maxmemory-policy noeviction`; `settings`
    /// (`--name value` pairs) added.
    pub fn start(name: &str, settings: &[&str]) -> Self {
        let dir = super::scratch(&format!("redis-{name}"));
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let mut redis = Redis {
            port,
            dir,
            settings: settings.iter().map(|s| (*s).to_owned()).collect(),
            child: None,
        };
        redis.restart();
        redis
    }

    /// Its address for `--store`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Start it (again), on its port and folder, its append-only file
    /// read back; once it answers `PING`.
    pub fn restart(&mut self) {
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "everysec",
            ])
            .args(["--maxmemory-policy", "noeviction"])
            .arg("--dir")
            .arg(&self.dir)
            .args(&self.settings)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = command.spawn().unwrap_or_else(|err| {
            panic!(
                "redis-server cannot be started ({err}); `cargo xtask ci` installs it, or `apt-get install redis-server`"
            )
        });
        self.child = Some(child);
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if self.command(&["PING"]).as_deref() == Some("+PONG") {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "redis-server on port {} did not answer PING within 10 s",
            self.port
        );
    }

    /// Stop it at once (SIGKILL): what it had not written is lost.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// One command's first reply line (`+PONG`, `:3`, `$5`…), or `None`
    /// when it does not answer.
    pub fn command(&self, words: &[&str]) -> Option<String> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        let mut request = format!("*{}\r\n", words.len());
        for word in words {
            request.push_str(&format!("${}\r\n{word}\r\n", word.len()));
        }
        stream.write_all(request.as_bytes()).ok()?;
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).ok()?;
        Some(line.trim_end().to_owned())
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
