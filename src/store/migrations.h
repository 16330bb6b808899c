/*
 * migrations.h - the numbered, forward-only schema steps compiled in from
 * migrations/<backend>/ (see cmake/embed_migrations.cmake). Each table ends
 * with a {0, NULL, NULL} sentinel. Versions are strictly increasing.
 */
#ifndef SK_STORE_MIGRATIONS_H
#define SK_STORE_MIGRATIONS_H

typedef struct sk_migration {
    int version;
    const char *name;
    const char *sql;
} sk_migration;

extern const sk_migration sk_migrations_sqlite[];
extern const sk_migration sk_migrations_postgres[];

#endif
