//! serde into a [`Json`] tree, the writer of [`super::LayoutSpec`]'s derived `Serialize`: a
//! struct variant is written as a layout spec `{"family": F, "params": {...}}` (the form `de`
//! reads), its fields in their declared order. The schema holds integers, booleans, options
//! and lists of them; the rest of serde's data model is an error.

use super::Json;
use core::fmt;
use serde::ser::{self, Impossible, Serialize};
use std::string::{String, ToString};
use std::vec::Vec;

/// `value` as a [`Json`] tree.
pub(crate) fn to_json<T: Serialize + ?Sized>(value: &T) -> Result<Json, WriteError> {
    value.serialize(Writer)
}

/// A value outside the schema.
#[derive(Debug)]
pub(crate) struct WriteError(String);

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WriteError {}

impl ser::Error for WriteError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        WriteError(message.to_string())
    }
}

/// The error for a part of serde's data model the schema does not use.
fn outside(what: &str) -> WriteError {
    WriteError(std::format!("{what} is outside the layout spec schema"))
}

struct Writer;

/// Integers written as `i64`.
macro_rules! integers {
    ($($method:ident: $t:ty),*) => {$(
        fn $method(self, v: $t) -> Result<Json, WriteError> {
            Ok(Json::Int(v.into()))
        }
    )*};
}

/// Parts of the data model outside the schema, by the first argument's type.
macro_rules! outside {
    ($($method:ident($t:ty)),*) => {$(
        fn $method(self, _: $t) -> Result<Json, WriteError> {
            Err(outside(stringify!($t)))
        }
    )*};
}

impl ser::Serializer for Writer {
    type Ok = Json;
    type Error = WriteError;
    type SerializeSeq = Items;
    type SerializeTuple = Impossible<Json, WriteError>;
    type SerializeTupleStruct = Impossible<Json, WriteError>;
    type SerializeTupleVariant = Impossible<Json, WriteError>;
    type SerializeMap = Impossible<Json, WriteError>;
    type SerializeStruct = Impossible<Json, WriteError>;
    type SerializeStructVariant = Params;

    integers!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64);
    integers!(serialize_u8: u8, serialize_u16: u16, serialize_u32: u32);
    outside!(serialize_u64(u64), serialize_f32(f32), serialize_f64(f64));
    outside!(
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8])
    );
    outside!(serialize_unit_struct(&'static str));

    fn serialize_bool(self, v: bool) -> Result<Json, WriteError> {
        Ok(Json::Bool(v))
    }

    fn serialize_none(self) -> Result<Json, WriteError> {
        Ok(Json::Null)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Json, WriteError> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<Json, WriteError> {
        Err(outside("()"))
    }

    fn serialize_unit_variant(
        self,
        name: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<Json, WriteError> {
        Err(outside(name))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        _: &T,
    ) -> Result<Json, WriteError> {
        Err(outside(name))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Json, WriteError> {
        Err(outside(name))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Items, WriteError> {
        Ok(Items(Vec::with_capacity(len.unwrap_or(0))))
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, WriteError> {
        Err(outside("a tuple"))
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, WriteError> {
        Err(outside(name))
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, WriteError> {
        Err(outside(name))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, WriteError> {
        Err(outside("a map"))
    }

    fn serialize_struct(
        self,
        name: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, WriteError> {
        Err(outside(name))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        family: &'static str,
        len: usize,
    ) -> Result<Params, WriteError> {
        Ok(Params {
            family,
            members: Vec::with_capacity(len),
        })
    }
}

/// The items of a list.
struct Items(Vec<Json>);

impl ser::SerializeSeq for Items {
    type Ok = Json;
    type Error = WriteError;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), WriteError> {
        self.0.push(value.serialize(Writer)?);
        Ok(())
    }

    fn end(self) -> Result<Json, WriteError> {
        Ok(Json::Array(self.0))
    }
}

/// The parameters of a layout spec of family `family`.
struct Params {
    family: &'static str,
    members: Vec<(String, Json)>,
}

impl ser::SerializeStructVariant for Params {
    type Ok = Json;
    type Error = WriteError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), WriteError> {
        self.members
            .push((key.to_string(), value.serialize(Writer)?));
        Ok(())
    }

    fn end(self) -> Result<Json, WriteError> {
        Ok(Json::object([
            ("family", Json::String(self.family.to_string())),
            ("params", Json::Object(self.members)),
        ]))
    }
}
