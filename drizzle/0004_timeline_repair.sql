-- From here on a tsid names one message per conversation (messages_c2g_tsid_uq, messages_c2c_tsid_uq, next
-- migration). Rows stored before that rule that share their tsid with an earlier message of the same group or pair
-- get their server id as tsid (the convention of S2C ids), so the unique indexes can be built.
with d as (
  select id, row_number() over (partition by to_id, split_part(client_id, '.', 2) order by id) as rn
  from messages where chat_type = 'C2G'
)
update messages m set client_id = regexp_replace(m.client_id, '^([^.]*)\.[^.]*', '\1.' || m.id)
from d where d.id = m.id and d.rn > 1;
--> statement-breakpoint
with d as (
  select id, row_number() over (
    partition by least(from_id, to_id), greatest(from_id, to_id), split_part(client_id, '.', 2) order by id) as rn
  from messages where chat_type = 'C2C'
)
update messages m set client_id = regexp_replace(m.client_id, '^([^.]*)\.[^.]*', '\1.' || m.id)
from d where d.id = m.id and d.rn > 1;
