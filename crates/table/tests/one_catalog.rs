//! One `Catalog` per database (issue 39): a second `Catalog::open` on a clone of the same
//! handle is refused while the first lives, and allowed once it (every clone) is dropped.

use talus::{Db, Error, Options};
use talus_table::{Catalog, ColumnDef, ColumnType, TableDef, TableError, Value};

#[test]
fn a_second_catalog_on_one_database_is_refused_while_the_first_lives() {
    let dir = tempfile::tempdir().unwrap();
    let db =
        Db::open(dir.path(), Options { create_if_missing: true, ..Default::default() }).unwrap();
    let first = Catalog::open(db.clone()).unwrap();
    let e = Catalog::open(db.clone()).expect_err("two catalogs on one database");
    assert!(matches!(&e, TableError::Engine(Error::Busy(m)) if m.contains("already open")), "{e}");
    let def = TableDef {
        name: "t".into(),
        columns: vec![ColumnDef { name: "id".into(), ty: ColumnType::I64, nullable: false }],
        primary_key: vec!["id".into()],
        indexes: vec![],
    };
    first.create_table(def).unwrap().insert(&vec![Value::from(1i64)]).unwrap();
    let clone = first.clone();
    drop(first);
    assert!(Catalog::open(db.clone()).is_err(), "a clone still holds the catalog");
    drop(clone);
    let again = Catalog::open(db).expect("the last clone's drop released it");
    assert_eq!(
        again.table("t").unwrap().get(&[Value::from(1i64)]).unwrap().map(|r| r.len()),
        Some(1)
    );
}

#[test]
fn catalogs_of_two_databases_live_side_by_side() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let opts = Options { create_if_missing: true, ..Default::default() };
    let ca = Catalog::open(Db::open(a.path(), opts.clone()).unwrap()).unwrap();
    let cb = Catalog::open(Db::open(b.path(), opts).unwrap()).unwrap();
    drop((ca, cb));
}
