//! serde over a [`Json`] tree that knows where it is: the typed schema of a spec is declared with
//! `#[derive(Deserialize)]`, and every error names the JSON path of the bad field
//! (`params.order[2]`) and why, in the words of [`super::uint`] and friends.
//!
//! An enum is a layout spec `{"family": F, "params": {...}}`: the variant is named by `family`,
//! the fields of a struct variant are the members of `params`.

use super::{field, index, join, string, Json, SpecError};
use core::fmt;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess,
};
use serde::Deserialize;
use std::format;
use std::string::{String, ToString};

/// Deserializes `T` from the value `v` found at `path`.
pub(crate) fn from_json_at<'a, T: Deserialize<'a>>(
    v: &'a Json,
    path: &str,
) -> Result<T, SpecError> {
    T::deserialize(At {
        value: v,
        path: path.to_string(),
    })
    .map_err(|e| SpecError::field(e.path.as_deref().unwrap_or(path), e.message))
}

/// A value and its JSON path.
struct At<'a> {
    value: &'a Json,
    path: String,
}

/// An error of the typed schema; `path` is filled in by the innermost value that knows it.
#[derive(Debug)]
struct DeError {
    path: Option<String>,
    message: String,
    /// Set by `missing_field`: the field's name, joined to the object's path.
    missing: Option<&'static str>,
    /// Set by `unknown_field`: the fields the object accepts, named once its type is known.
    expected: Option<&'static [&'static str]>,
}

impl DeError {
    fn new(message: String) -> Self {
        DeError {
            path: None,
            message,
            missing: None,
            expected: None,
        }
    }

    /// The error located at `path`, unless an inner value located it already.
    fn at(mut self, path: &str) -> Self {
        if self.path.is_none() {
            self.path = Some(match self.missing {
                Some(field) => join(path, field),
                None => path.to_string(),
            });
        }
        self
    }

    /// Names the layout family `name` in an unknown-parameter error.
    fn in_family(mut self, name: &str) -> Self {
        if let Some(expected) = self.expected.take() {
            self.message = format!(
                "unknown parameter of a {name} layout (expected {})",
                expected.join(", ")
            );
        }
        self
    }
}

impl From<SpecError> for DeError {
    fn from(e: SpecError) -> Self {
        match e {
            SpecError::Field { path, message } => DeError {
                path: Some(path),
                ..DeError::new(message)
            },
            other => DeError::new(other.to_string()),
        }
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        DeError::new(message.to_string())
    }

    fn missing_field(field: &'static str) -> Self {
        DeError {
            missing: Some(field),
            ..DeError::new("missing".to_string())
        }
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        DeError::new(format!(
            "unknown layout family \"{variant}\" (expected one of {})",
            expected.join(", ")
        ))
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        DeError {
            expected: Some(expected),
            ..DeError::new(format!(
                "unknown field `{field}` (expected {})",
                expected.join(", ")
            ))
        }
    }
}

impl At<'_> {
    fn wrong(&self, expected: &str) -> DeError {
        DeError::new(format!("expected {expected}, found {}", self.value.kind())).at(&self.path)
    }

    fn wrong_value(&self, expected: &str) -> DeError {
        DeError::new(format!("expected {expected}, found {}", self.value)).at(&self.path)
    }
}

impl<'de> Deserializer<'de> for At<'de> {
    type Error = DeError;

    fn deserialize_any<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let path = self.path.clone();
        match self.value {
            Json::Null => visitor.visit_unit(),
            Json::Bool(b) => visitor.visit_bool(*b),
            Json::Int(v) => visitor.visit_i64(*v),
            Json::Float(v) => visitor.visit_f64(*v),
            Json::String(s) => visitor.visit_borrowed_str(s),
            Json::Array(_) => return self.deserialize_seq(visitor),
            Json::Object(_) => return self.deserialize_map(visitor),
        }
        .map_err(|e: DeError| e.at(&path))
    }

    fn deserialize_u32<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value.as_u32() {
            Some(v) => visitor.visit_u32(v).map_err(|e: DeError| e.at(&self.path)),
            None => Err(self.wrong_value("a non-negative integer below 2^32")),
        }
    }

    fn deserialize_bool<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value.as_bool() {
            Some(b) => visitor.visit_bool(b).map_err(|e: DeError| e.at(&self.path)),
            None => Err(self.wrong_value("true or false")),
        }
    }

    fn deserialize_str<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Json::String(s) => visitor
                .visit_borrowed_str(s)
                .map_err(|e: DeError| e.at(&self.path)),
            _ => Err(self.wrong("a string")),
        }
    }

    fn deserialize_string<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Json::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_seq<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Json::Array(items) => visitor
                .visit_seq(Items {
                    items: items.iter().enumerate(),
                    path: &self.path,
                })
                .map_err(|e: DeError| e.at(&self.path)),
            _ => Err(self.wrong("an array")),
        }
    }

    fn deserialize_map<V: de::Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Json::Object(members) => visitor
                .visit_map(Members {
                    members: members.iter(),
                    value: None,
                    path: &self.path,
                })
                .map_err(|e: DeError| e.at(&self.path)),
            _ => Err(self.wrong("an object")),
        }
    }

    fn deserialize_struct<V: de::Visitor<'de>>(
        self,
        name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_map(visitor).map_err(|e| e.in_family(name))
    }

    fn deserialize_enum<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let family_path = join(&self.path, "family");
        let family = string(field(self.value, &self.path, "family")?, &family_path)?;
        let params_path = join(&self.path, "params");
        let params = field(self.value, &self.path, "params")?;
        visitor.visit_enum(Family {
            name: family,
            path: family_path,
            params: At {
                value: params,
                path: params_path,
            },
        })
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u64 u128 f32 f64 char bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct identifier ignored_any
    }
}

/// The items of an array, each at `path[i]`.
struct Items<'a, I> {
    items: I,
    path: &'a str,
}

impl<'de, I: Iterator<Item = (usize, &'de Json)>> SeqAccess<'de> for Items<'_, I> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DeError> {
        match self.items.next() {
            Some((i, value)) => seed
                .deserialize(At {
                    value,
                    path: index(self.path, i),
                })
                .map(Some),
            None => Ok(None),
        }
    }
}

/// The members of an object, each value at `path.key`.
struct Members<'a, 'de> {
    members: core::slice::Iter<'de, (String, Json)>,
    value: Option<(&'de Json, String)>,
    path: &'a str,
}

impl<'de> MapAccess<'de> for Members<'_, 'de> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        match self.members.next() {
            Some((key, value)) => {
                let path = join(self.path, key);
                let name = de::value::BorrowedStrDeserializer::<DeError>::new(key);
                let key = seed.deserialize(name).map_err(|e: DeError| e.at(&path))?;
                self.value = Some((value, path));
                Ok(Some(key))
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let (value, path) = self
            .value
            .take()
            .ok_or_else(|| DeError::new("a value without its key".to_string()))?;
        seed.deserialize(At {
            value,
            path: path.clone(),
        })
        .map_err(|e| e.at(&path))
    }
}

/// A layout spec's family (the variant, at `path`) and its `params` (the variant's fields).
struct Family<'de> {
    name: &'de str,
    path: String,
    params: At<'de>,
}

impl<'de> EnumAccess<'de> for Family<'de> {
    type Error = DeError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), DeError> {
        let name = de::value::BorrowedStrDeserializer::<DeError>::new(self.name);
        let variant = seed.deserialize(name).map_err(|e| e.at(&self.path))?;
        Ok((variant, self))
    }
}

impl Family<'_> {
    /// A variant without named fields: the schema has none.
    fn not_named(&self) -> DeError {
        DeError::new("a layout family's parameters are named".to_string()).at(&self.path)
    }
}

impl<'de> VariantAccess<'de> for Family<'de> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        Err(self.not_named())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _seed: T) -> Result<T::Value, DeError> {
        Err(self.not_named())
    }

    fn tuple_variant<V: de::Visitor<'de>>(
        self,
        _len: usize,
        _visitor: V,
    ) -> Result<V::Value, DeError> {
        Err(self.not_named())
    }

    fn struct_variant<V: de::Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let family = self.name;
        self.params
            .deserialize_map(visitor)
            .map_err(|e| e.in_family(family))
    }
}
