//! What is damaged: the block types of the matrix's rows (plain data in
//! [`crate::model::integrity`], where the filesystems' plug-ins see it too).

pub use crate::model::integrity::Target;
