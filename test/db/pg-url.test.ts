import { expect, test } from "bun:test";
import { singleHost, unixSocketOf } from "../../src/db/pg-url.ts";

test.each([
  ["postgres://postgres@127.0.0.1:5432/postgres", true],
  ["postgresql://u:p@db.internal/ibis?sslmode=require", true],
  ["postgres://u:p@h1:5432,h2:5432/ibis", false],
  ["postgresql://a,b/ibis", false],
])("singleHost(%s) = %p: one host gets the TCP_NODELAY socket factory, several keep postgres.js's failover", (url, want) => {
  expect(singleHost(url)).toBe(want);
});

test.each([
  ["postgres://postgres@127.0.0.1:5432/postgres", { url: "postgres://postgres@127.0.0.1:5432/postgres" }],
  ["postgres://h/ibis?host=db.internal", { url: "postgres://h/ibis?host=db.internal" }],
  ["postgres:///ibis?host=/var/run/postgresql", { url: "postgres://localhost/ibis", path: "/var/run/postgresql/.s.PGSQL.5432" }],
  ["postgresql://u:p@/ibis?sslmode=disable&host=/tmp/", { url: "postgresql://u:p@localhost/ibis?sslmode=disable", path: "/tmp/.s.PGSQL.5432" }],
  ["postgres://u@/ibis?host=/tmp&port=5433", { url: "postgres://u@localhost/ibis", path: "/tmp/.s.PGSQL.5433" }],
  ["postgres://u:p@h:6000/ibis?host=/tmp", { url: "postgres://u:p@h:6000/ibis", path: "/tmp/.s.PGSQL.6000" }],
])("unixSocketOf(%s): libpq's ?host=/dir becomes postgres.js's socket path", (url, want) => {
  expect(unixSocketOf(url)).toEqual(want);
});
