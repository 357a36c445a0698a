//! Analysis of what the driver measured and the store holds: the head-to-head report of a
//! `compare` ([`compare`]), the observed facts that explain a gap ([`explain`]) and two stored
//! runs compared test by test ([`diff`]). Everything here computes; showing it is
//! [`crate::present`].

pub mod compare;
pub mod diff;
pub mod explain;
