//! The salsa database: its trait, the concrete database, and the execution log that the
//! incrementality tests read.
//!
//! Invariant: queries do no IO and read no clock or environment; everything they know comes in
//! through the inputs of `input.rs`. The log records which queries *executed* (not which were
//! merely validated), so a test can state what an edit must not re-run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The database every query takes.
#[salsa::db]
pub trait Db: salsa::Database {}

/// The one concrete database.
#[salsa::db]
#[derive(Clone)]
pub struct RootDatabase {
    storage: salsa::Storage<Self>,
    log: ExecutionLog,
}

/// Which queries executed, by name, while logging is on — and, apart, which memos were only
/// re-validated (a query whose inputs are all more durable than the last change is not even
/// re-validated: the library tests read this).
#[derive(Clone, Default)]
pub struct ExecutionLog {
    /// Set while logging, so that an unlogged execution costs one relaxed load.
    on: Arc<AtomicBool>,
    entries: Arc<Mutex<Option<Vec<String>>>>,
    validated: Arc<Mutex<Vec<String>>>,
}

impl ExecutionLog {
    fn record(&self, entry: String) {
        if let Ok(mut guard) = self.entries.lock()
            && let Some(entries) = guard.as_mut()
        {
            entries.push(entry);
        }
    }
}

impl Default for RootDatabase {
    /// A database without an event callback: salsa then builds no events at all.
    fn default() -> RootDatabase {
        RootDatabase { storage: salsa::Storage::new(None), log: ExecutionLog::default() }
    }
}

impl RootDatabase {
    /// A database that can log which queries execute (for the incrementality tests); events cost
    /// a little on every query, so only tests ask for it.
    pub fn with_execution_log() -> RootDatabase {
        let log = ExecutionLog::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if !sink.on.load(Ordering::Relaxed) {
                return;
            }
            match event.kind {
                salsa::EventKind::WillExecute { database_key } => sink.record(format!("{database_key:?}")),
                salsa::EventKind::DidValidateMemoizedValue { database_key } => {
                    if let Ok(mut validated) = sink.validated.lock() {
                        validated.push(format!("{database_key:?}"));
                    }
                }
                _ => {}
            }
        })));
        RootDatabase { storage, log }
    }

    /// Starts recording executed queries (clearing anything recorded before).
    pub fn start_logging(&self) {
        if let Ok(mut guard) = self.log.entries.lock() {
            *guard = Some(Vec::new());
        }
        if let Ok(mut validated) = self.log.validated.lock() {
            validated.clear();
        }
        self.log.on.store(true, Ordering::Relaxed);
    }

    /// The memos re-validated (without executing) since logging started, as `query_name(Id(..))`.
    /// Read after [`RootDatabase::take_log`].
    pub fn take_validated(&self) -> Vec<String> {
        match self.log.validated.lock() {
            Ok(mut validated) => std::mem::take(&mut *validated),
            Err(_) => Vec::new(),
        }
    }

    /// The queries executed since logging started, as `query_name(Id(..))`, and stops recording.
    pub fn take_log(&self) -> Vec<String> {
        self.log.on.store(false, Ordering::Relaxed);
        match self.log.entries.lock() {
            Ok(mut guard) => guard.take().unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }
}

#[salsa::db]
impl salsa::Database for RootDatabase {}

#[salsa::db]
impl Db for RootDatabase {}
