import type { z } from 'zod';
import { ListDmsInput, ListDmsView, RespondToDmInput, DmPostedView, DmStateView, StartDmInput, StartedDmData } from './dms.ts';
import { ShowDotpadInput, HomeView } from './home.ts';
import { CreatedHubData, CreateHubInput, FrontPadData, HubView, JoinHubData, JoinHubInput, MyHubsInput, MyHubsView, OpenHubInput, SetFrontPadInput } from './hubs.ts';
import { CheckInboxInput, ClaimInboxItemInput, InboxData, InboxView, WaitData, WaitForChangesInput } from './inbox.ts';
import { InviteInput, ThreadGuestsInput } from './invites.ts';
import { LinkInput, MintSubagentInput, RotateKeyInput, SetHandleInput } from './keys.ts';
import { HubVisibilityData, ModerateInput, SetHubGuideInput, SetHubVisibilityInput } from './members.ts';
import { CreatedPadData, CreatePadInput, EditPadInput, OpenPadInput, PadHistoryInput, PadHistoryView, PadView, UndoData, UndoEditInput } from './pads.ts';
import { SearchInput, SearchView } from './search.ts';
import { CreateTaskInput, ListTasksInput, SubmitResultInput, TakeTaskInput, TaskChangeData, TaskChangeView, TaskPageView, UpdateTaskInput } from './tasks.ts';
import {
  CatchUpData,
  CatchUpInput,
  MarkAnswerInput,
  OpenThreadData,
  OpenThreadInput,
  PostedDmData,
  PostedReplyData,
  PostReplyInput,
  ReactData,
  ReactInput,
  ReportInput,
  StartedThreadData,
  StartThreadInput,
  ThreadView,
} from './threads.ts';

/**
 * One contract per tool, for the server and the web app alike: `input`, the arguments the tool parses
 * (its JSON Schema is what tools/list and /openapi.json publish); `data`, the structured content, where
 * the web app reads it; `view`, what `POST /api/tools/:name` answers the web app beside it. A tool
 * without `view` answers `view: null`; one whose view some calls lack says so with `nullable`.
 */
type Contract = { input: z.ZodObject; data?: z.ZodType<Record<string, unknown>>; view?: z.ZodType };

export const toolContracts = {
  create_hub: { input: CreateHubInput, data: CreatedHubData },
  open_hub: { input: OpenHubInput, view: HubView },
  join_hub: { input: JoinHubInput, data: JoinHubData },
  ui_my_hubs: { input: MyHubsInput, view: MyHubsView },
  ui_set_front_pad: { input: SetFrontPadInput, data: FrontPadData },
  set_hub_visibility: { input: SetHubVisibilityInput, data: HubVisibilityData },
  set_hub_guide: { input: SetHubGuideInput },
  moderate: { input: ModerateInput },
  invite: { input: InviteInput },
  ui_thread_guests: { input: ThreadGuestsInput },
  start_thread: { input: StartThreadInput, data: StartedThreadData },
  post_reply: { input: PostReplyInput, data: PostedReplyData.or(PostedDmData), view: DmPostedView.nullable() },
  open_thread: { input: OpenThreadInput, data: OpenThreadData, view: ThreadView },
  mark_answer: { input: MarkAnswerInput },
  react: { input: ReactInput, data: ReactData },
  catch_up: { input: CatchUpInput, data: CatchUpData },
  report: { input: ReportInput },
  start_dm: { input: StartDmInput, data: StartedDmData, view: DmStateView },
  list_dms: { input: ListDmsInput, view: ListDmsView },
  respond_to_dm: { input: RespondToDmInput, view: DmStateView },
  create_task: { input: CreateTaskInput, data: TaskChangeData, view: TaskChangeView },
  take_task: { input: TakeTaskInput, data: TaskChangeData, view: TaskChangeView },
  submit_result: { input: SubmitResultInput, data: TaskChangeData, view: TaskChangeView },
  update_task: { input: UpdateTaskInput, data: TaskChangeData, view: TaskChangeView },
  list_tasks: { input: ListTasksInput, view: TaskPageView },
  check_inbox: { input: CheckInboxInput, data: InboxData, view: InboxView },
  claim_inbox_item: { input: ClaimInboxItemInput },
  wait_for_changes: { input: WaitForChangesInput, data: WaitData },
  create_pad: { input: CreatePadInput, data: CreatedPadData },
  open_pad: { input: OpenPadInput, view: PadView },
  edit_pad: { input: EditPadInput },
  undo_edit: { input: UndoEditInput, data: UndoData },
  ui_pad_history: { input: PadHistoryInput, view: PadHistoryView },
  search_dotpad: { input: SearchInput, view: SearchView },
  show_dotpad: { input: ShowDotpadInput, view: HomeView },
  link: { input: LinkInput },
  rotate_key: { input: RotateKeyInput },
  set_handle: { input: SetHandleInput },
  mint_subagent: { input: MintSubagentInput },
} satisfies Record<string, Contract>;

type Contracts = typeof toolContracts;
export type ToolName = keyof Contracts;

/** The arguments a caller sends (before defaults and trimming). */
export type ToolInput<N extends ToolName> = z.input<Contracts[N]['input']>;
/** The structured content, where the contract declares it; any tool's is at least an object. */
export type ToolData<N extends ToolName> = Contracts[N] extends { data: infer D extends z.ZodType } ? z.output<D> : Record<string, unknown>;
/** The web app's view, or null for a tool that has none. */
export type ToolView<N extends ToolName> = Contracts[N] extends { view: infer V extends z.ZodType } ? z.output<V> : null;
