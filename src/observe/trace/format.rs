//! Event format files (`events/block/NAME/format`, `events/header_page`): an event's numeric id
//! and where each of its fields sits in the binary record. Offsets are read from the running
//! kernel rather than hard-coded, so a kernel that moves a field still parses correctly.

/// Position of one field in a binary record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Byte offset from the start of the record (`common_type` is at 0).
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

/// A parsed format file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Format {
    /// Event name (`name:` line), empty for `header_page`.
    pub name: String,
    /// The `common_type` value of this event's records (`ID:` line).
    pub id: Option<u16>,
    fields: Vec<(String, Field)>,
}

impl Format {
    /// Parse the text of a format file. Lines that are not understood are ignored; a file without
    /// any field yields `None`.
    pub fn parse(text: &str) -> Option<Format> {
        let mut f = Format::default();
        for line in text.lines() {
            let line = line.trim();
            if let Some(n) = line.strip_prefix("name:") {
                f.name = n.trim().to_string();
            } else if let Some(id) = line.strip_prefix("ID:") {
                f.id = id.trim().parse().ok();
            } else if line.starts_with("field:") {
                if let Some(entry) = parse_field(line) {
                    f.fields.push(entry);
                }
            }
        }
        (!f.fields.is_empty()).then_some(f)
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<Field> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, f)| *f)
    }

    /// Parse the format of `event` (for messages), refusing a text without fields.
    pub fn parse_event(event: impl std::fmt::Debug, text: &str) -> Result<Format, FormatError> {
        Format::parse(text).ok_or_else(|| FormatError::Unreadable { event: format!("{event:?}") })
    }

    /// The event's id.
    pub fn require_id(&self) -> Result<u16, FormatError> {
        self.id.ok_or_else(|| FormatError::NoId { event: self.name.clone() })
    }

    /// The field `name`, which the decoder needs.
    pub fn require(&self, name: &str) -> Result<Field, FormatError> {
        self.field(name)
            .ok_or_else(|| FormatError::NoField { event: self.name.clone(), field: name.into() })
    }

    /// The offset of the field `name`, which must have one of `sizes`.
    pub fn offset_of(&self, name: &str, sizes: &[usize]) -> Result<usize, FormatError> {
        let f = self.require(name)?;
        if !sizes.contains(&f.size) {
            return Err(FormatError::FieldSize {
                event: self.name.clone(),
                field: name.into(),
                size: f.size,
            });
        }
        Ok(f.offset)
    }
}

/// A tracepoint whose format the decoders cannot read (a kernel that changed it), or devices
/// they cannot tell apart.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// A format file without fields.
    #[error("{event}: unreadable format")]
    Unreadable {
        /// The event.
        event: String,
    },
    /// No `ID:` line.
    #[error("{event}: no ID")]
    NoId {
        /// The event.
        event: String,
    },
    /// A field the decoder reads is missing.
    #[error("{event}: no field {field}")]
    NoField {
        /// The event.
        event: String,
        /// The field.
        field: String,
    },
    /// A field of another size than the decoder reads.
    #[error("{event}: field {field} has size {size}")]
    FieldSize {
        /// The event.
        event: String,
        /// The field.
        field: String,
        /// Its size in bytes.
        size: usize,
    },
    /// The devices and their indexes differ in number (a bug of the caller).
    #[error("device list and index differ in length")]
    DeviceIndex,
    /// More devices than an event's device index holds.
    #[error("at most 256 devices can be traced at once")]
    TooManyDevices,
}

impl crate::sys::classify::Classify for FormatError {
    /// The running kernel's formats, not the user's input.
    fn is_bad_input(&self) -> bool {
        false
    }
}

/// `field:char rwbs[10];\toffset:28;\tsize:10;\tsigned:0;` -> (`rwbs`, 28, 10).
fn parse_field(line: &str) -> Option<(String, Field)> {
    let mut parts = line.split(';');
    let decl = parts.next()?.strip_prefix("field:")?.trim();
    // The name is the last word of the declaration, without an array suffix.
    let last = decl.rsplit(|c: char| c.is_whitespace()).next()?;
    let name = last.split('[').next()?.to_string();
    let mut offset = None;
    let mut size = None;
    for p in parts {
        let p = p.trim();
        if let Some(v) = p.strip_prefix("offset:") {
            offset = v.trim().parse().ok();
        } else if let Some(v) = p.strip_prefix("size:") {
            size = v.trim().parse().ok();
        }
    }
    Some((name, Field { offset: offset?, size: size? }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_real_format_file() {
        let f = Format::parse(include_str!("testdata/block_rq_issue.format")).unwrap();
        assert_eq!(f.name, "block_rq_issue");
        assert_eq!(f.id, Some(2104));
        assert_eq!(f.field("common_type"), Some(Field { offset: 0, size: 2 }));
        assert_eq!(f.field("dev"), Some(Field { offset: 8, size: 4 }));
        assert_eq!(f.field("sector"), Some(Field { offset: 16, size: 8 }));
        assert_eq!(f.field("nr_sector"), Some(Field { offset: 24, size: 4 }));
        assert_eq!(f.field("rwbs"), Some(Field { offset: 34, size: 10 }));
        assert_eq!(f.field("cmd"), Some(Field { offset: 60, size: 4 }));
        assert_eq!(f.field("nope"), None);
    }

    #[test]
    fn parses_header_page() {
        // As printed by /sys/kernel/tracing/events/header_page on x86_64.
        let text = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
                    \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
                    \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
                    \tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
        let f = Format::parse(text).unwrap();
        assert_eq!(f.id, None);
        assert_eq!(f.field("commit"), Some(Field { offset: 8, size: 8 }));
        assert_eq!(f.field("data"), Some(Field { offset: 16, size: 4080 }));
    }

    #[test]
    fn garbage_is_none() {
        assert!(Format::parse("hello\nworld").is_none());
    }
}
