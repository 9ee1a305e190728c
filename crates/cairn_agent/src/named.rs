//! `Named<T>`: a name-keyed JSON object as a typed value — entries in the order first given, a
//! repeated name replacing its entry in place, as a JSON object would. The records of the edit
//! host and of the command line (guard-site counts, rule cards, bindings, verified functions)
//! build their name-keyed parts with it.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// A name-keyed object (see the module comment).
#[derive(Debug, Clone, PartialEq)]
pub struct Named<T>(Vec<(String, T)>);

impl<T> Default for Named<T> {
    fn default() -> Named<T> {
        Named(Vec::new())
    }
}

impl<T> Named<T> {
    /// Sets `name` to `value`: in place when the name is there, else at the end.
    pub fn insert(&mut self, name: impl Into<String>, value: T) {
        let name = name.into();
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = value,
            None => self.0.push((name, value)),
        }
    }

    /// True when it has no entry.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = &(String, T)> {
        self.0.iter()
    }
}

impl<T> FromIterator<(String, T)> for Named<T> {
    fn from_iter<I: IntoIterator<Item = (String, T)>>(entries: I) -> Named<T> {
        let mut named = Named::default();
        for (name, value) in entries {
            named.insert(name, value);
        }
        named
    }
}

impl<T: Serialize> Serialize for Named<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}
