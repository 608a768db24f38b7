//! `ldb backup` and `ldb restore` (RocksDB's ldb commands of those names) over
//! [`talus::BackupEngine`]. Each checks its arguments before it creates anything: `backup`
//! opens the database before the backup directory (which it creates if missing), `restore`
//! needs an existing backup directory and a `--db` that does not exist yet.

use std::path::PathBuf;

use talus::BackupEngine;

use super::{Ctx, Fail};

fn backup_dir(ctx: &Ctx<'_>) -> Result<PathBuf, Fail> {
    match ctx.args.value("backup_dir") {
        Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
        _ => Err(Fail::Msg("needs --backup_dir=<directory>".into())),
    }
}

/// `backup --backup_dir=DIR`: a new (incremental) backup of `--db`.
pub(super) fn backup(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let dir = backup_dir(ctx)?;
    let db = ctx.open(|_| {})?;
    let engine = BackupEngine::open(&dir)?;
    let id = engine.create_new_backup(&db)?;
    let info = engine.get_backup_info()?;
    let b = info.iter().find(|b| b.backup_id == id).ok_or_else(|| Fail::Msg("lost".into()))?;
    writeln!(
        ctx.out,
        "backup {id} created in {}: {} files, {} bytes, sequence {}",
        dir.display(),
        b.number_files,
        b.size,
        b.sequence
    )?;
    Ok(())
}

/// `restore --backup_dir=DIR [--backup_id=N]`: the newest backup (or backup N), verified as
/// it is copied, into the new directory `--db`.
pub(super) fn restore(ctx: &mut Ctx<'_>) -> Result<(), Fail> {
    let dir = backup_dir(ctx)?;
    let db = ctx.db_path()?;
    let id = match ctx.args.value("backup_id") {
        Some(v) => Some(v.parse::<u32>().map_err(|_| Fail::Msg(format!("bad --backup_id {v}")))?),
        None => None,
    };
    if db.exists() {
        return Err(Fail::Msg(format!(
            "{} exists: restore goes into a new directory",
            db.display()
        )));
    }
    if !dir.join("TALUS-BACKUP").exists() {
        return Err(Fail::Msg(format!("{} is not a backup directory", dir.display())));
    }
    let engine = BackupEngine::open(&dir)?;
    match id {
        Some(id) => engine.restore_db_from_backup(id, &db)?,
        None => engine.restore_db_from_latest_backup(&db)?,
    }
    writeln!(ctx.out, "restored into {}", db.display())?;
    Ok(())
}
