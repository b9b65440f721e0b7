-- The roles and the database of one boardready deployment on an external
-- PostgreSQL 15-18. Run once, as a superuser (or a role with CREATEROLE and
-- CREATEDB holding boardready_api WITH ADMIN OPTION):
--
--   psql "postgresql://postgres@db.example.com/postgres" -v ON_ERROR_STOP=1 \
--        -v database=boardready -v migrate_role=boardready_migrate -v app_role=boardready_app \
--        -v migrate_password="'$(openssl rand -hex 24)'" -v app_password="'$(openssl rand -hex 24)'" \
--        -v app_connection_limit=60 -f deploy/roles.sql
--
-- migrate_role owns the database and every object in it: bin/migrate,
--   bin/token, bin/psql and pg_dump use it; a running service never does.
-- app_role is what the API and the workers log in as: a member of
--   boardready_api, the NOLOGIN role to which the migrations grant EXECUTE on
--   the SQL functions and SELECT on the operator views and the few tables the
--   review pages read. It can INSERT, UPDATE or DELETE nothing: every change
--   goes through a function.
-- boardready_api is one role for the whole cluster: keep one deployment per
--   cluster, or rely on CONNECT (below) to keep deployments apart.
SELECT 'CREATE ROLE boardready_api NOLOGIN'
 WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'boardready_api') \gexec
CREATE ROLE :"migrate_role" LOGIN PASSWORD :migrate_password;
CREATE ROLE :"app_role" LOGIN PASSWORD :app_password CONNECTION LIMIT :app_connection_limit IN ROLE boardready_api;
-- The first migration grants boardready_api to the role that runs it (so that
-- bin/psql's operator views work for it too): that needs the admin option.
GRANT boardready_api TO :"migrate_role" WITH ADMIN OPTION;
CREATE DATABASE :"database" OWNER :"migrate_role" ENCODING 'UTF8' TEMPLATE template0;
REVOKE ALL ON DATABASE :"database" FROM PUBLIC;
GRANT CONNECT ON DATABASE :"database" TO :"app_role";
\connect :"database"
-- Only the owner may create anything (PostgreSQL 15 and later revoke CREATE
-- on public already; this also holds on a cluster upgraded from 14).
REVOKE ALL ON SCHEMA public FROM PUBLIC;
