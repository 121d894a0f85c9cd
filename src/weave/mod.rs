//! Weaving: integrate many personas' branches, ranges and patch files onto one integration branch, in
//! memory, and tell the authors of what does not apply.

pub mod apply;
pub mod binary;
pub mod engine;
pub mod footprint;
pub mod input;
pub mod mbox;
pub mod patch;
pub mod persona;
pub mod report;
pub mod trailers;
