-- Group messages move from per-member inbox rows and marks to timelines (docs/delivery.md "Upgrade"). Every
-- device keeps exactly the pending set it had: its cursor stops before its oldest pending group message, and the
-- numbers past it that were already acknowledged (or never in its inbox) go to `above`.
insert into timeline (message_id, conv_id, seq)
select id, to_id, row_number() over (partition by to_id order by id) from messages where chat_type = 'C2G';
--> statement-breakpoint
insert into timeline_head (conv_id, last_seq) select conv_id, max(seq) from timeline group by conv_id;
--> statement-breakpoint
-- A member's span starts before the first group message in their inbox; one who left ends at their last one.
insert into timeline_member (conv_id, user_id, join_seq, leave_seq)
select t.conv_id, i.user_id, min(t.seq) - 1,
  case when exists (select 1 from im_group_member g where g.group_id = t.conv_id and g.user_id = i.user_id)
    then null else max(t.seq) end
from inbox i join timeline t on t.message_id = i.message_id
group by t.conv_id, i.user_id;
--> statement-breakpoint
-- Members who received no message yet see from now on.
insert into timeline_member (conv_id, user_id, join_seq)
select g.group_id, g.user_id, coalesce((select h.last_seq from timeline_head h where h.conv_id = g.group_id), 0)
from im_group_member g
where not exists (select 1 from timeline_member s where s.conv_id = g.group_id and s.user_id = g.user_id);
--> statement-breakpoint
insert into timeline_cursor (user_id, device_id, conv_id, seq, above)
select d.user_id, d.device_id, s.conv_id,
  coalesce(u.first - 1, coalesce(s.leave_seq, h.last_seq)),
  coalesce((select array_agg(t.seq order by t.seq) from timeline t
    where t.conv_id = s.conv_id and t.seq > u.first and t.seq <= coalesce(s.leave_seq, h.last_seq)
      and not (t.message_id >= d.floor_id
        and exists (select 1 from inbox i where i.user_id = d.user_id and i.message_id = t.message_id)
        and not exists (select 1 from delivery_mark k
          where k.user_id = d.user_id and k.device_id = d.device_id and k.message_id = t.message_id))), '{}')
from delivery_device d
join timeline_member s on s.user_id = d.user_id
join timeline_head h on h.conv_id = s.conv_id
cross join lateral (
  select min(t.seq) as first from timeline t join inbox i on i.message_id = t.message_id and i.user_id = d.user_id
  where t.conv_id = s.conv_id and t.seq > s.join_seq and t.seq <= coalesce(s.leave_seq, h.last_seq)
    and t.message_id >= d.floor_id
    and not exists (select 1 from delivery_mark k
      where k.user_id = d.user_id and k.device_id = d.device_id and k.message_id = t.message_id)
) u;
--> statement-breakpoint
delete from delivery_mark k using messages m where m.id = k.message_id and m.chat_type = 'C2G';
--> statement-breakpoint
delete from inbox i using messages m where m.id = i.message_id and m.chat_type = 'C2G';
