//! Cells to and from PostgreSQL: a statement parameter takes the type the server inferred for
//! it (a key compared with a BIGINT column is an INT8, a flag computed by CASE an INT4), and a
//! result cell is read by its column's type.

use std::error::Error;

use beeline_search::Value;
use bytes::BytesMut;
use tokio_postgres::Row;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};

/// A [`Value`] as a parameter.
#[derive(Debug)]
pub(crate) struct Param<'a>(pub &'a Value);

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match self.0 {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT8 => i.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                _ => i.to_string().as_str().to_sql(ty, out),
            },
            Value::Text(text) => match *ty {
                Type::INT2 | Type::INT4 | Type::INT8 => {
                    Err(format!("'{text}' where the query compares an integer").into())
                }
                _ => text.as_str().to_sql(ty, out),
            },
        }
    }

    fn accepts(ty: &Type) -> bool {
        matches!(
            *ty,
            Type::INT2
                | Type::INT4
                | Type::INT8
                | Type::BOOL
                | Type::TEXT
                | Type::VARCHAR
                | Type::BPCHAR
                | Type::NAME
                | Type::UNKNOWN
        )
    }

    to_sql_checked!();
}

/// The cells of a row, by their columns' types.
pub(crate) fn cells(row: &Row) -> Result<Vec<Value>, tokio_postgres::Error> {
    let mut cells = Vec::with_capacity(row.len());
    for (i, column) in row.columns().iter().enumerate() {
        let cell = match *column.type_() {
            Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map(Value::Int),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(i)?
                .map(|n| Value::Int(n.into())),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(i)?
                .map(|n| Value::Int(n.into())),
            Type::BOOL => row.try_get::<_, Option<bool>>(i)?.map(Value::bool),
            _ => row.try_get::<_, Option<String>>(i)?.map(Value::Text),
        };
        cells.push(cell.unwrap_or(Value::Null));
    }
    Ok(cells)
}
